"""The trusted side's verdict on what a sandboxed kernel produced (algorithm.md, "Correctness and timing").

Pure functions of arrays and traces, shared by every backend: relative L2 in float64 with NaN/Inf
failing, output count/dtype/size checks, the inputs-not-mutated check, the precision rule on the
kernel's buffers, the trace-versus-outputs consistency check and the physical-peak guard.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from accelopt_graph.tools.nkisim.trace import Buffer, Engine, TraceEvent
from accelopt_graph.tools.sandbox_child import array_digest

_CHUNK = 1 << 18  # elements per float64 chunk: 2 MiB temporaries, mostly cache-resident


@dataclass(frozen=True)
class CaseVerdict:
    """Outcome of checking one case; `error` is the text the LLM sees when `ok` is False."""

    ok: bool
    rel_l2: float | None = None
    error: str = ""


def rel_l2(out: np.ndarray, ref: np.ndarray) -> float:
    """Return ||out - ref||_2 / ||ref||_2 in float64; inf when `out` has a NaN or Inf."""
    flat_out, flat_ref = out.reshape(-1), ref.reshape(-1)
    if not np.isfinite(flat_out).all():
        return math.inf
    err_sq = ref_sq = 0.0
    for start in range(0, flat_ref.size, _CHUNK):
        r = flat_ref[start:start + _CHUNK]
        d = np.subtract(flat_out[start:start + _CHUNK], r, dtype=np.float64)
        err_sq += float(d @ d)
        ref_sq += float(np.einsum("i,i->", r, r, dtype=np.float64))
    return math.sqrt(err_sq) / math.sqrt(ref_sq) if ref_sq > 0 else math.sqrt(err_sq)


def check_case(*, outputs: Sequence[np.ndarray], reference: Sequence[np.ndarray],
               inputs_sent: Sequence[object], input_digests: Sequence[str], rtol: float,
               label: str) -> CaseVerdict:
    """Check one case: inputs untouched, outputs of the right count/dtype/size, rel L2 < rtol.

    `input_digests` are `array_digest`s of the inputs as the kernel's process saw them after
    the run; they must match digests of what was sent (bitwise: any change counts).
    """
    for i, (sent, seen) in enumerate(zip(inputs_sent, input_digests, strict=True)):
        if array_digest(sent) != seen:
            return CaseVerdict(False, error=f"{label}: the kernel modified input {i}; kernel inputs "
                                            "are read-only (write results to a new output tensor)")
    if len(outputs) != len(reference):
        return CaseVerdict(False, error=f"{label}: kernel returned {len(outputs)} outputs, "
                                        f"expected {len(reference)}")
    worst = 0.0
    for j, (out, ref) in enumerate(zip(outputs, reference)):
        if out.dtype != ref.dtype:
            return CaseVerdict(False, error=f"{label}: output {j} has dtype {out.dtype}, expected "
                                            f"{ref.dtype} (no precision lowering)")
        if out.size != ref.size:
            return CaseVerdict(False, error=f"{label}: output {j} has shape {out.shape}, which does "
                                            f"not reshape to the expected {ref.shape}")
        err = rel_l2(out, ref)
        if math.isinf(err):
            bad = int((~np.isfinite(out)).sum())
            return CaseVerdict(False, rel_l2=err, error=f"{label}: output {j} has {bad} NaN/Inf "
                               f"elements of {out.size} (unwritten output elements read as NaN)")
        if not err < rtol:
            return CaseVerdict(False, rel_l2=err, error=f"{label}: output {j} relative L2 error "
                               f"{err:.3e} is not below the tolerance {rtol:.0e}")
        worst = max(worst, err)
    return CaseVerdict(True, rel_l2=worst)


def forbidden_dtype_use(trace: Iterable[TraceEvent], forbidden: Iterable[str]) -> str | None:
    """Return the first forbidden dtype a traced instruction computes in or touches, else None."""
    banned = {d.lower() for d in forbidden}
    if not banned:
        return None
    for event in trace:
        for dtype in (event.dtype, *(a.dtype for a in event.reads + event.writes)):
            if dtype.lower() in banned:
                return f"line {event.line}: {event.op} uses {dtype}"
    return None


def trace_inconsistency(trace: Sequence[TraceEvent], outputs: Sequence[np.ndarray]) -> str | None:
    """Say why `trace` cannot have produced `outputs`, or return None.

    Outputs are poisoned with NaN before the run, so a correct output proves every element was
    stored to HBM; a trace that writes fewer HBM bytes than the outputs hold was tampered with
    (a kernel hiding work from the performance model). Likewise every SBUF tile an instruction
    reads must have been written by an earlier instruction (a load, a memset, a compute op): a
    trace with compute events removed reads tiles nothing produced. PSUM is exempt because the
    simulator records no event for zero-initialised PSUM tiles.
    """
    written = sum(a.nbytes for e in trace for a in e.writes if a.buffer is Buffer.HBM)
    needed = sum(int(o.nbytes) for o in outputs)
    if written < needed:
        return (f"the instruction trace stores {written} bytes to HBM but the outputs hold {needed}; "
                "the trace does not account for the kernel's work")
    produced: set[int] = set()
    for event in trace:
        if event.engine is not Engine.NONE:
            for a in event.reads:
                if a.buffer is Buffer.SBUF and a.tensor_id not in produced:
                    return (f"the instruction trace reads SBUF tile {a.name or a.tensor_id!r} at line "
                            f"{event.line} ({event.op}) before any instruction wrote it; the trace "
                            "does not account for the kernel's work")
        produced.update(a.tensor_id for a in event.writes)
    return None


# The task's peak is the paper's metric, which counts Trn1's ScalarE at the VectorE clock
# (1.12 GHz); at its real 1.4 GHz the vector peak is 322.56e9 rather than 286.72e9 FLOP/s
# (nkibench.md §1, caveats). A legitimate kernel can beat the metric by that factor, not more.
PHYSICAL_PEAK_MARGIN = 322.56e9 / 286.72e9


def below_peak(latency_ms: float, peak_latency_ms: float | None) -> str | None:
    """Return a flag message when a latency is faster than physically possible."""
    if peak_latency_ms is not None and latency_ms * PHYSICAL_PEAK_MARGIN < peak_latency_ms:
        return (f"latency {latency_ms:.4g} ms is below what the hardware can do (the task's peak "
                f"{peak_latency_ms:.4g} ms / {PHYSICAL_PEAK_MARGIN:.3f}): rejected and flagged "
                "for review")
    return None
