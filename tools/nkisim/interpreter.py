"""Running a kernel: `simulate_kernel` (NumPy in, NumPy out, like the SDK) and `run_kernel`
(outputs plus the instruction trace, optionally trace-only), and the affine-order check."""
from __future__ import annotations

import gc
import inspect
import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from . import dtypes as dt
from .dependencies import affine_dependencies
from .errors import SimCompileError, SimError, SimRuntimeError
from .kernel import unwrap
from .nt import is_mutable
from .runtime import Run, in_package, using
from .tensors import HBM, Tensor, View
from .trace import LoopFrame, LoopKind, TraceEvent

try:  # tile matmuls are 128x128x512: multi-threaded BLAS only adds contention at that size
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover - threadpoolctl is a declared dependency
    threadpool_limits = None


@dataclass
class SimResult:
    """Outputs (as the kernel returns them, NumPy arrays; None in trace-only mode), the trace and
    what the run noticed. Unpacks as `outputs, trace = run_kernel(...)`."""

    outputs: object
    trace: list[TraceEvent] | None
    warnings: list[str] = field(default_factory=list)
    peak_sbuf_bytes_per_partition: int = 0
    peak_psum_bytes_per_partition: int = 0
    grid: tuple[int, ...] = ()

    def __iter__(self):
        return iter((self.outputs, self.trace))


def _single_threaded_blas():
    """Limit BLAS to one thread for the run; None where that is not possible (a sandbox may forbid
    reading /proc/self/maps, which threadpoolctl scans: set OPENBLAS_NUM_THREADS=1 there)."""
    if threadpool_limits is None:
        return None
    try:
        return threadpool_limits(1, user_api="blas")
    except Exception:  # noqa: BLE001 - any failure only costs speed
        return None


def _wrap_arg(run: Run, name: str, value, annotation):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray) or (hasattr(value, "__array__") and not np.isscalar(value)):
        arr = np.asarray(value)
        d = dt.to_dtype(arr.dtype, what=f"dtype of argument `{name}`")
        mutable = is_mutable(annotation)
        data = None
        if run.compute:
            if arr.dtype != d or mutable:
                data = arr.astype(d)  # a private copy: the caller's array is never written
            else:
                data = arr.view()
                data.flags.writeable = False
        t = Tensor(run, arr.shape, d, HBM, data, name=name, role="param")
        t.written = True
        if mutable:
            t.role = "mutable"
        return t
    return value


def _to_numpy(value, what: str):
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return type(value)(_to_numpy(v, f"{what}[{i}]") for i, v in enumerate(value))
    if isinstance(value, dict):
        return {k: _to_numpy(v, f"{what}[{k!r}]") for k, v in value.items()}
    if isinstance(value, View):  # `return out[...]`: the selected part of an HBM tensor
        t = value.tensor
        full = _to_numpy(t, what)
        return None if full is None else np.array(value.read())
    if isinstance(value, Tensor):
        if not value.space.is_hbm:
            raise SimCompileError(f"kernel output {what} is in {value.space.name}; kernels return "
                                  "HBM tensors (nl.ndarray(..., buffer=nl.shared_hbm) + nl.store)",
                                  code="err_unsupported_memory")
        if not value.written:
            raise SimCompileError(f"kernel {what} `{value.name or 'tensor'}` is never written to",
                                  code="err_tensor_output_not_written_to")
        data = value.data
        if data is None:
            return None
        if isinstance(data, np.ndarray) and data.flags.writeable and value.role != "param":
            return data  # the run is over: hand the array over instead of copying it
        return np.array(data)
    return value


def _locate(exc: SimError, tb) -> None:
    """Attach the innermost kernel-source frame of the traceback to the error."""
    where = None
    while tb is not None:
        fname = tb.tb_frame.f_code.co_filename
        if not in_package(fname):
            where = (fname, tb.tb_lineno)
        tb = tb.tb_next
    if where:
        exc.at(*where)


def run_kernel(kernel, args=(), kwargs=None, *, grid=None, collect_trace: bool = True,
               compute: bool = True, hardware: str = "trn1", shuffle_seed: int | None = None,
               enforce_capacity: bool = True, strict_affine: bool = False,
               check_affine: bool | None = None) -> SimResult:
    """Run a kernel on the simulator. `compute=False` is trace-only: control flow, rule checks
    and the trace are the same, the NumPy arithmetic is skipped and outputs are None.

    With a trace and `check_affine` (implied by `strict_affine`), dependencies across
    `affine_range` iterations (`dependencies.py`) are reported in `warnings`, or raised as
    `SimCompileError` (err_unexpected_output_dependencies) when `strict_affine`. The check is a
    pass over the trace (~7 us per event), so it is opt-in."""
    if check_affine is None:
        check_affine = strict_affine
    func, launch_grid = unwrap(kernel)
    g = grid if grid is not None else launch_grid
    g = tuple(int(x) for x in (g if isinstance(g, (tuple, list)) else (g,)))
    kwargs = dict(kwargs or {})
    run = Run(compute=compute, collect_trace=collect_trace, hardware=hardware,
              shuffle_seed=shuffle_seed, enforce_capacity=enforce_capacity)
    run.grid = g
    try:
        sig = inspect.signature(func)
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise SimRuntimeError(f"cannot call kernel `{getattr(func, '__name__', func)}`: {exc}",
                              code="err_kernel_arguments") from None
    limits = _single_threaded_blas() if compute else None
    gc_was_enabled = gc.isenabled()
    gc.disable()  # a run allocates ~10 objects per instruction and no cycles: skip GC passes
    try:
        with using(run):
            for name, value in list(bound.arguments.items()):
                ann = sig.parameters[name].annotation
                bound.arguments[name] = _wrap_arg(run, name, value, ann)
            result = None
            programs = list(itertools.product(*(range(n) for n in g))) if g else [()]
            for linear, pid in enumerate(programs):
                run.program_id = tuple(pid)
                run.shared_cursor = 0
                if len(programs) > 1:  # the legacy compiler runs the grid as a loop (loop id 0)
                    run.loops = (LoopFrame(0, LoopKind.AFFINE, linear, len(programs)),)
                result = func(*bound.args, **bound.kwargs)
            run.loops = ()
            outputs = _to_numpy(result, "output")
            run.memory.check()
            if run.trace is not None and check_affine:
                carried = affine_dependencies(run.trace)
                if carried and strict_affine:
                    raise SimCompileError(
                        carried[0] + "; use nl.sequential_range, or allocate the tensor inside the "
                        "loop body", code="err_unexpected_output_dependencies")
                run.warnings.extend(carried)
    except SimError as exc:
        _locate(exc, exc.__traceback__)
        raise
    finally:
        if gc_was_enabled:
            if run.trace is not None and not gc.get_freeze_count():
                # The trace (~7 GC-tracked objects per instruction) was allocated with GC off: it
                # all sits in the youngest generation, and the first allocation after
                # gc.enable() would traverse it (~0.2 s for 10^5 events), and again when it is
                # promoted. freeze + unfreeze moves every tracked object to the oldest
                # generation without traversing it (only when nobody else has frozen objects,
                # which unfreeze would release).
                gc.freeze()
                gc.unfreeze()
            gc.enable()
        if limits is not None:
            limits.restore_original_limits()
    return SimResult(outputs, run.trace, list(run.warnings), run.memory.peak["sbuf"],
                     run.memory.peak["psum"], g)


def simulate_kernel(kernel, *args, check_affine_order: bool = False, hardware: str = "trn1",
                    **kwargs):
    """Like `nki.simulate_kernel`: run on CPU, NumPy arrays in and out."""
    if check_affine_order:
        check_affine_iterations(kernel, *args, hardware=hardware, **kwargs)
    return run_kernel(kernel, args, kwargs, collect_trace=False, hardware=hardware).outputs


@dataclass
class AffineOrderReport:
    """Outcome of running affine_range iterations in shuffled orders."""

    independent: bool
    worst_rel_l2: float
    detail: str = ""


def _rel_l2(a, b) -> float:
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    if a.shape != b.shape:
        return math.inf
    if np.array_equal(np.isnan(a), np.isnan(b)):
        ok = ~np.isnan(a)
        a, b = a[ok], b[ok]
    else:
        return math.inf
    den = np.linalg.norm(a)
    return float(np.linalg.norm(a - b) / den) if den else float(np.linalg.norm(a - b))


def _flatten(x):
    if isinstance(x, (tuple, list)):
        return [y for v in x for y in _flatten(v)]
    return [] if x is None else [x]


def check_affine_iterations(kernel, *args, seeds=(1, 2), rtol: float = 1e-5,
                            hardware: str = "trn1", raise_error: bool = True, **kwargs):
    """Run the kernel in order and with `affine_range` iterations shuffled; report (or raise
    `SimCompileError` err_unexpected_output_dependencies) when the outputs differ beyond `rtol`
    (up to floating-point re-association of accumulations)."""
    ref = _flatten(run_kernel(kernel, args, kwargs, collect_trace=False, hardware=hardware).outputs)
    worst = 0.0
    for seed in seeds:
        out = _flatten(run_kernel(kernel, args, kwargs, collect_trace=False, hardware=hardware,
                                  shuffle_seed=seed).outputs)
        for i, (a, b) in enumerate(zip(ref, out)):
            worst = max(worst, _rel_l2(a, b))
    report = AffineOrderReport(worst <= rtol, worst)
    if not report.independent:
        report.detail = (
            f"affine_range iterations are not independent: the output changes (relative L2 "
            f"{worst:.3g}) when the iterations run in a different order. A value computed in one "
            "iteration is used by another; use nl.sequential_range for loops with a carried "
            "dependency")
        if raise_error:
            raise SimCompileError(report.detail, code="err_unexpected_output_dependencies")
    return report
