"""The task file format (`task.yaml`, nkibench.md §5), validated with pydantic.

A malformed file is rejected with `TaskSpecError`, whose message names the file and the field.
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from accelopt_graph.nkibench.expr import ExprError, evaluate, names
from accelopt_graph.nkibench.peak import Bound, WorkCount

Formula = int | str  # integer arithmetic over parameters, see expr.py

# Reduced-precision dtypes the paper's harness forbids (nkibench.md §2 "Precision").
DEFAULT_FORBIDDEN = ["float16", "bfloat16", "tfloat32", "float8_e4m3", "float8_e5m2", "float8_e4m3fn"]


class TaskSpecError(ValueError):
    """A task directory whose files do not follow the task format."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InitSpec(_Strict):
    """How an input array is drawn: float32(loc + scale * standard_normal), then `post`."""

    dist: Literal["normal"] = "normal"
    loc: float = 0.0
    scale: float = Field(1.0, gt=0)
    post: Literal["abs"] | None = None


class InitOverride(_Strict):
    loc: float | None = None
    scale: float | None = Field(None, gt=0)
    post: Literal["abs"] | None = None


class InputSpec(_Strict):
    """One kernel argument: an array (shape + init) or a Python float scalar (value)."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    shape: list[Formula] | None = None
    dtype: Literal["float32"] = "float32"
    init: InitSpec = InitSpec()
    value: float | None = None

    @model_validator(mode="after")
    def _array_or_scalar(self) -> "InputSpec":
        if (self.shape is None) == (self.value is None):
            raise ValueError(f"input {self.name!r}: give exactly one of `shape` (array) or `value` (scalar)")
        return self

    @property
    def is_scalar(self) -> bool:
        return self.value is not None


class OutputSpec(_Strict):
    name: str
    shape: list[Formula]
    dtype: Literal["float32"] = "float32"


class LayoutEntry(_Strict):
    """The kernel-side view of one array: an optional axis permutation, then a C-order reshape."""

    kernel_shape: list[Formula]
    index_map: str = ""  # human-readable, e.g. "m = 128a + p, k = 128t + j"
    permute: list[int] | None = None


class LayoutSpec(_Strict):
    inputs: dict[str, LayoutEntry] = {}
    outputs: dict[str, LayoutEntry] = {}


class CheckSpec(_Strict):
    metric: Literal["rel_l2"] = "rel_l2"
    rtol: float = Field(gt=0, lt=1)
    seeds: list[int] = Field(min_length=1)
    bench_seed: int
    adversarial_seed: int = 0


class AdversarialCase(_Strict):
    """Inputs a shortcut kernel must fail on: `init` overrides, or a generator in reference.py."""

    name: str = Field(pattern=r"^[a-z0-9_]+$")
    purpose: str = Field(min_length=1)
    init: dict[str, InitOverride] = {}
    generator: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> "AdversarialCase":
        if bool(self.init) == bool(self.generator):
            raise ValueError(f"adversarial case {self.name!r}: give exactly one of `init` or `generator`")
        return self


class PeakTerm(_Strict):
    formula: Formula
    value: int = Field(ge=0)  # the formula evaluated at the task's own parameters


class PeakSpec(_Strict):
    vec_flops: PeakTerm
    mm_flops: PeakTerm
    bytes: PeakTerm
    bound: dict[str, Bound] = {}  # expected bound per hardware target


class BaselineSpec(_Strict):
    file: str = "baseline.py"
    provenance: str = "accelopt-graph project"
    structure: str = ""
    inefficiencies: list[str] = []


class TaskSpec(_Strict):
    """The content of one task.yaml."""

    name: str = Field(pattern=r"^[a-z0-9_]+$")
    version: int = Field(ge=1)
    family: str = Field(min_length=1)
    description: str = Field(min_length=1)
    parameters: dict[str, int]
    test_parameters: dict[str, int] = {}  # reduced sizes for CI tests
    inputs: list[InputSpec] = Field(min_length=1)
    outputs: list[OutputSpec] = Field(min_length=1)
    layout: LayoutSpec = LayoutSpec()
    check: CheckSpec
    adversarial: list[AdversarialCase] = []
    peak: PeakSpec
    baseline: BaselineSpec = BaselineSpec()
    forbidden_dtypes: list[str] = Field(default_factory=lambda: list(DEFAULT_FORBIDDEN))

    def work(self, params: dict[str, int]) -> WorkCount:
        return WorkCount(vec_flops=evaluate(self.peak.vec_flops.formula, params),
                         mm_flops=evaluate(self.peak.mm_flops.formula, params),
                         bytes=evaluate(self.peak.bytes.formula, params))


def _check_semantics(spec: TaskSpec) -> list[str]:
    """Cross-field rules pydantic cannot express; each problem names its field."""
    problems = []
    known = set(spec.parameters)
    extra = set(spec.test_parameters) - known
    if extra:
        problems.append(f"test_parameters: unknown parameters {sorted(extra)}")
    formulas: list[tuple[str, Formula]] = []
    for i, inp in enumerate(spec.inputs):
        formulas += [(f"inputs[{i}].shape", f) for f in inp.shape or []]
    for i, out in enumerate(spec.outputs):
        formulas += [(f"outputs[{i}].shape", f) for f in out.shape]
    for group, entries in (("inputs", spec.layout.inputs), ("outputs", spec.layout.outputs)):
        for key, entry in entries.items():
            formulas += [(f"layout.{group}.{key}.kernel_shape", f) for f in entry.kernel_shape]
    for term in ("vec_flops", "mm_flops", "bytes"):
        formulas.append((f"peak.{term}.formula", getattr(spec.peak, term).formula))
    for where, formula in formulas:
        try:
            unknown = names(formula) - known
        except ExprError as exc:
            problems.append(f"{where}: {exc}")
            continue
        if unknown:
            problems.append(f"{where}: unknown parameters {sorted(unknown)} in {formula!r}")
    if problems:
        return problems

    array_inputs = {i.name: i for i in spec.inputs if not i.is_scalar}
    outputs = {o.name: o for o in spec.outputs}
    if len({i.name for i in spec.inputs}) != len(spec.inputs):
        problems.append("inputs: duplicate input names")
    for group, entries, arrays in (("inputs", spec.layout.inputs, array_inputs),
                                   ("outputs", spec.layout.outputs, outputs)):
        for key, entry in entries.items():
            if key not in arrays:
                problems.append(f"layout.{group}.{key}: no array {group[:-1]} named {key!r}")
                continue
            for label, params in (("parameters", spec.parameters),
                                  ("test_parameters", {**spec.parameters, **spec.test_parameters})):
                shape = [evaluate(f, params) for f in arrays[key].shape]
                kshape = [evaluate(f, params) for f in entry.kernel_shape]
                if entry.permute is not None and sorted(entry.permute) != list(range(len(shape))):
                    problems.append(f"layout.{group}.{key}.permute: {entry.permute} is not a permutation "
                                    f"of {len(shape)} axes")
                    break
                if _prod(shape) != _prod(kshape) or min(kshape, default=1) <= 0:
                    problems.append(f"layout.{group}.{key}.kernel_shape: {kshape} does not hold the "
                                    f"{shape} array at the {label} (only C-order reshapes are allowed)")
    for case in spec.adversarial:
        for key in case.init:
            if key not in array_inputs:
                problems.append(f"adversarial.{case.name}.init: no array input named {key!r}")
    for term in ("vec_flops", "mm_flops", "bytes"):
        t = getattr(spec.peak, term)
        got = evaluate(t.formula, spec.parameters)
        if got != t.value:
            problems.append(f"peak.{term}.value: {t.value} but the formula {t.formula!r} gives {got}")
    if spec.check.adversarial_seed < 0 or spec.check.bench_seed < 0:
        problems.append("check: seeds must be non-negative")
    return problems


def _prod(xs: list[int]) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def load_spec(path: Path) -> TaskSpec:
    """Read and validate a task.yaml; raise TaskSpecError naming the file and field."""
    try:
        raw = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise TaskSpecError(f"{path}: task file not found") from None
    except yaml.YAMLError as exc:
        raise TaskSpecError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise TaskSpecError(f"{path}: expected a mapping at the top level, got {type(raw).__name__}")
    try:
        spec = TaskSpec.model_validate(raw)
    except ValidationError as exc:
        lines = [f"{path}: invalid task file"]
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"]) or "<root>"
            lines.append(f"  field {loc}: {err['msg']}")
        raise TaskSpecError("\n".join(lines)) from None
    problems = _check_semantics(spec)
    if problems:
        raise TaskSpecError("\n".join([f"{path}: invalid task file"] + [f"  field {p}" for p in problems]))
    if spec.name != path.parent.name:
        raise TaskSpecError(f"{path}: field name: {spec.name!r} differs from its directory {path.parent.name!r}")
    return spec
