"""An NKIBench task: inputs, oracle, layouts, tolerance, peak and baseline of one kernel problem.

`Task` implements the `KernelTask` protocol of `accelopt_graph.tools.backend`. Inputs and
reference outputs are handed out in the kernel's layout (pure C-order reshapes of the NumPy
arrays, nkibench.md §2 "Layouts"); the oracle runs only in the trusted process.
"""
from __future__ import annotations

import hashlib
import importlib.util
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Mapping, Sequence

import numpy as np

from accelopt_graph.nkibench.cache import ORACLE_CACHE
from accelopt_graph.nkibench.expr import evaluate
from accelopt_graph.nkibench.peak import Peak, WorkCount, peak_latency
from accelopt_graph.nkibench.spec import InitSpec, LayoutEntry, TaskSpec, TaskSpecError, load_spec
from accelopt_graph.tools.checks import CaseVerdict, check_case

TASKS_DIR = Path(__file__).with_name("tasks")
Case = str | None
KernelArg = np.ndarray | float


class Task:
    """One task at concrete parameters (the spec's own, or reduced ones for tests)."""

    def __init__(self, spec: TaskSpec, directory: Path, params: Mapping[str, int] | None = None):
        self.spec = spec
        self.directory = directory
        unknown = set(params or {}) - set(spec.parameters)
        if unknown:
            raise TaskSpecError(f"{directory / 'task.yaml'}: params override unknown parameters "
                                f"{sorted(unknown)} (known: {sorted(spec.parameters)})")
        self.parameters: dict[str, int] = {**spec.parameters, **(params or {})}
        self._check_shapes()

    # --- KernelTask protocol -------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def version(self) -> int:
        return self.spec.version

    @property
    def rtol(self) -> float:
        return self.spec.check.rtol

    def kernel_inputs(self, seed: int, case: Case = None) -> list[KernelArg]:
        """Return the kernel's arguments for (seed, case), in the kernel's layout (read-only arrays)."""
        arrays = self.numpy_inputs(seed, case)
        return [v if spec.is_scalar else self._to_kernel(v, self.spec.layout.inputs.get(spec.name))
                for spec, v in zip(self.spec.inputs, arrays)]

    def reference_outputs(self, seed: int, case: Case = None) -> list[np.ndarray]:
        """Return the oracle's outputs for (seed, case), in the kernel's layout (cached, read-only)."""
        return ORACLE_CACHE.get_or_compute(self._key("ref", seed, case), lambda: self._compute_reference(seed, case))

    def check_cases(self, seeds: Sequence[int] | None = None) -> list[tuple[int, Case]]:
        """(seed, case) pairs a correct kernel must pass: every seed, then every adversarial case."""
        seeds = list(self.spec.check.seeds if seeds is None else seeds)
        return [(s, None) for s in seeds] + [(self.spec.check.adversarial_seed, c.name) for c in self.spec.adversarial]

    def peak_latency_ms(self, hardware: str) -> float:
        return self.peak(hardware).latency_ms

    # --- what the graph and the bench use --------------------------------------------------
    @property
    def family(self) -> str:
        return self.spec.family

    @property
    def description(self) -> str:
        return self.spec.description.strip()

    @property
    def forbidden_dtypes(self) -> list[str]:
        return list(self.spec.forbidden_dtypes)

    @property
    def bench_seed(self) -> int:
        return self.spec.check.bench_seed

    @property
    def cases(self) -> list[str]:
        return [c.name for c in self.spec.adversarial]

    @property
    def baseline_path(self) -> Path:
        return self.directory / self.spec.baseline.file

    @cached_property
    def baseline_code(self) -> str:
        return self.baseline_path.read_text()

    def work(self) -> WorkCount:
        return self.spec.work(self.parameters)

    def peak(self, hardware: str) -> Peak:
        """Return the theoretical peak latency on `hardware` and its bound (vec / mm / memory)."""
        return peak_latency(self.work(), hardware)

    def input_shapes(self) -> dict[str, tuple[int, ...]]:
        return {i.name: self._shape(i.shape) for i in self.spec.inputs if not i.is_scalar}

    def output_shapes(self) -> dict[str, tuple[int, ...]]:
        return {o.name: self._shape(o.shape) for o in self.spec.outputs}

    def kernel_input_shapes(self) -> dict[str, tuple[int, ...]]:
        return {i.name: self._kernel_shape(i.shape, self.spec.layout.inputs.get(i.name))
                for i in self.spec.inputs if not i.is_scalar}

    def kernel_output_shapes(self) -> dict[str, tuple[int, ...]]:
        return {o.name: self._kernel_shape(o.shape, self.spec.layout.outputs.get(o.name)) for o in self.spec.outputs}

    @property
    def kernel_signature(self) -> str:
        """How the kernel is called, with every argument's kernel layout (shown to the executor)."""
        args, lines = [], []
        kshapes = self.kernel_input_shapes()
        for inp in self.spec.inputs:
            if inp.is_scalar:
                args.append(f"{inp.name}: float")
                lines.append(f"- {inp.name}: Python float = {inp.value!r}")
                continue
            entry = self.spec.layout.inputs.get(inp.name)
            args.append(inp.name)
            lines.append(f"- {inp.name}: float32{list(kshapes[inp.name])} in HBM; NumPy shape "
                         f"{list(self._shape(inp.shape))}{_layout_note(entry)}")
        outs = self.kernel_output_shapes()
        for out in self.spec.outputs:
            entry = self.spec.layout.outputs.get(out.name)
            lines.append(f"- returns {out.name}: float32{list(outs[out.name])} (allocate with "
                         f"nl.ndarray(..., buffer=nl.shared_hbm)); NumPy shape "
                         f"{list(self._shape(out.shape))}{_layout_note(entry)}")
        return f"kernel({', '.join(args)})\n" + "\n".join(lines)

    @property
    def correctness_rule(self) -> str:
        return (f"Relative L2 error ||out - ref|| / ||ref|| (float64, all elements) below {self.rtol:g} on seeds "
                f"{list(self.spec.check.seeds)} and the adversarial cases {self.cases or 'none'}; any NaN/Inf "
                f"fails; unwritten output elements read as NaN; dtypes {self.forbidden_dtypes} are forbidden.")

    def numpy_inputs(self, seed: int, case: Case = None) -> list[KernelArg]:
        """Return the NumPy-layout inputs for (seed, case); arrays are read-only and cached."""
        return ORACLE_CACHE.get_or_compute(self._key("in", seed, case), lambda: self._generate(seed, case))

    def check(self, outputs: Sequence[np.ndarray] | np.ndarray, seed: int, case: Case = None) -> CaseVerdict:
        """Apply the shared correctness rule (tools.checks) to trusted kernel outputs for (seed, case)."""
        outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        label = f"{self.name} seed {seed}" + (f" (adversarial case {case!r})" if case else "")
        return check_case(outputs=[np.asarray(o) for o in outs], reference=self.reference_outputs(seed, case),
                          inputs_sent=(), input_digests=(), rtol=self.rtol, label=label)

    def forward(self, *inputs: KernelArg) -> list[np.ndarray]:
        """Run the NumPy oracle on NumPy-layout inputs; returns NumPy-layout outputs."""
        with np.errstate(over="ignore", under="ignore"):
            out = self.reference.forward(*inputs)
        return [np.asarray(o) for o in (out if isinstance(out, (list, tuple)) else [out])]

    @cached_property
    def reference(self) -> ModuleType:
        return _import_file(self.directory / "reference.py", f"reference_{self.name}")

    def __reduce__(self):
        # Rebuild from the spec on unpickling: the imported reference module is not picklable.
        overrides = {k: v for k, v in self.parameters.items() if self.spec.parameters.get(k) != v}
        return (Task, (self.spec, self.directory, overrides))

    def __repr__(self) -> str:
        return f"Task({self.name!r}, v{self.version}, {self.parameters})"

    # --- internals ---------------------------------------------------------------------
    def _key(self, kind: str, seed: int, case: Case) -> tuple:
        return (kind, self.name, self.version, str(self.directory), tuple(sorted(self.parameters.items())), seed, case)

    def _shape(self, formulas: Sequence[int | str]) -> tuple[int, ...]:
        return tuple(evaluate(f, self.parameters) for f in formulas)

    def _kernel_shape(self, shape: Sequence[int | str], entry: LayoutEntry | None) -> tuple[int, ...]:
        return self._shape(entry.kernel_shape) if entry else self._shape(shape)

    def _check_shapes(self) -> None:
        where = self.directory / "task.yaml"
        for group, specs, entries in (("inputs", [i for i in self.spec.inputs if not i.is_scalar],
                                       self.spec.layout.inputs),
                                      ("outputs", self.spec.outputs, self.spec.layout.outputs)):
            for s in specs:
                shape = self._shape(s.shape)
                if min(shape) <= 0:
                    raise TaskSpecError(f"{where}: {group} {s.name!r} has shape {shape} at {self.parameters}")
                entry = entries.get(s.name)
                if entry and np.prod(self._shape(entry.kernel_shape)) != np.prod(shape):
                    raise TaskSpecError(f"{where}: field layout.{group}.{s.name}.kernel_shape "
                                        f"{self._shape(entry.kernel_shape)} does not hold {shape} at "
                                        f"parameters {self.parameters}")

    def _to_kernel(self, array: np.ndarray, entry: LayoutEntry | None) -> np.ndarray:
        if entry is None:
            return array
        if entry.permute is not None:
            array = np.ascontiguousarray(array.transpose(entry.permute))
        return array.reshape(self._shape(entry.kernel_shape))

    def _generate(self, seed: int, case: Case) -> list[KernelArg]:
        rng = np.random.default_rng(seed)
        adv = self._case(case)
        if adv is not None and adv.generator:
            make = getattr(self.reference, adv.generator, None)
            if make is None:
                raise TaskSpecError(f"{self.directory / 'reference.py'}: adversarial case {case!r} names "
                                    f"generator {adv.generator!r}, which is not defined")
            values = list(make(rng, dict(self.parameters), case))
            self._check_generated(values, case)
            return values
        overrides = adv.init if adv is not None else {}
        return [inp.value if inp.is_scalar else _draw(rng, self._shape(inp.shape), inp.init, overrides.get(inp.name))
                for inp in self.spec.inputs]

    def _check_generated(self, values: list, case: Case) -> None:
        if len(values) != len(self.spec.inputs):
            raise TaskSpecError(f"{self.directory / 'reference.py'}: generator for {case!r} returned "
                                f"{len(values)} inputs, the task declares {len(self.spec.inputs)}")
        for inp, v in zip(self.spec.inputs, values):
            if inp.is_scalar:
                continue
            if not isinstance(v, np.ndarray) or v.dtype != np.float32 or v.shape != self._shape(inp.shape):
                raise TaskSpecError(f"{self.directory / 'reference.py'}: generator for {case!r} returned "
                                    f"{inp.name} as {getattr(v, 'dtype', type(v))}{getattr(v, 'shape', '')}, "
                                    f"expected float32{self._shape(inp.shape)}")

    def _case(self, case: Case):
        if case is None:
            return None
        for c in self.spec.adversarial:
            if c.name == case:
                return c
        raise KeyError(f"task {self.name!r} has no adversarial case {case!r} (known: {self.cases})")

    def _compute_reference(self, seed: int, case: Case) -> list[np.ndarray]:
        outs = self.forward(*self.numpy_inputs(seed, case))
        if len(outs) != len(self.spec.outputs):
            raise TaskSpecError(f"{self.directory / 'reference.py'}: forward returned {len(outs)} outputs, "
                                f"the task declares {len(self.spec.outputs)}")
        result = []
        for spec, out in zip(self.spec.outputs, outs):
            if out.shape != self._shape(spec.shape):
                raise TaskSpecError(f"{self.directory / 'reference.py'}: forward output {spec.name!r} has shape "
                                    f"{out.shape}, the task declares {self._shape(spec.shape)}")
            result.append(self._to_kernel(np.ascontiguousarray(out, dtype=np.float32),
                                          self.spec.layout.outputs.get(spec.name)))
        return result


def _draw(rng: np.random.Generator, shape: tuple[int, ...], init: InitSpec, override) -> np.ndarray:
    loc, scale, post = init.loc, init.scale, init.post
    if override is not None:
        loc = init.loc if override.loc is None else override.loc
        scale = init.scale if override.scale is None else override.scale
        post = override.post or init.post
    x = rng.standard_normal(shape, dtype=np.float32)
    if scale != 1.0:
        x *= np.float32(scale)
    if loc != 0.0:
        x += np.float32(loc)
    if post == "abs":
        np.abs(x, out=x)
    return x


def _layout_note(entry: LayoutEntry | None) -> str:
    if entry is None:
        return " (same layout)"
    note = f", viewed as a C-order reshape" + (f" after permuting axes {entry.permute}" if entry.permute else "")
    return note + (f": {entry.index_map}" if entry.index_map else "")


def _import_file(path: Path, label: str) -> ModuleType:
    """Import a trusted task file (our own reference, or the user's own task) under a unique name."""
    if not path.is_file():
        raise TaskSpecError(f"{path}: file not found")
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    mod_name = f"accelopt_graph.nkibench._loaded.{label}_{digest}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise TaskSpecError(f"{path}: import failed: {type(exc).__name__}: {exc}") from exc
    if not callable(getattr(module, "forward", None)):
        raise TaskSpecError(f"{path}: defines no `forward(*inputs)` function")
    return module


def load_task(name: str, *, params: Mapping[str, int] | None = None, task_dir: Path | str | None = None,
              reduced: bool = False) -> Task:
    """Load task `name` from `task_dir` (default: the bundled NKIBench tasks).

    `params` overrides parameters (e.g. smaller shapes); `reduced=True` starts from the task's
    `test_parameters`, the small sizes CI uses, before `params` is applied.
    """
    root = Path(task_dir) if task_dir is not None else TASKS_DIR
    directory = root / name
    if not (directory / "task.yaml").is_file():
        raise KeyError(f"no task {name!r} in {root} (known: {list_tasks(root)})")
    spec = load_spec(directory / "task.yaml")
    overrides = {**(spec.test_parameters if reduced else {}), **(params or {})}
    return Task(spec, directory, overrides)


def list_tasks(task_dir: Path | str | None = None) -> list[str]:
    """Return the names of the tasks under `task_dir` (default: the bundled NKIBench tasks)."""
    root = Path(task_dir) if task_dir is not None else TASKS_DIR
    if not root.is_dir():
        raise FileNotFoundError(f"task directory {root} does not exist")
    return sorted(p.name for p in root.iterdir() if (p / "task.yaml").is_file())
