"""The correctness rule every backend applies (algorithm.md, "Correctness and timing").

‖out − ref‖₂ < rtol · ‖ref‖₂ in float64 over all elements; any NaN/Inf fails; the output must
keep float32 (no silent precision lowering); a wrong element count or dtype fails with a message
the fixer can act on.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

_CHUNK = 1 << 22  # elements per float64 chunk: bounds the temporary memory to ~100 MiB


class CheckReport(BaseModel):
    """Outcome of comparing a kernel's outputs with the oracle's (worst output counts)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ok: bool
    rel_l2: float | None = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    message: str = ""


def compare(outputs: Sequence[np.ndarray] | np.ndarray, expected: Sequence[np.ndarray], *,
            rtol: float) -> CheckReport:
    """Compare kernel outputs with the expected outputs (both in the kernel's layout)."""
    if isinstance(outputs, np.ndarray) or not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    if len(outputs) != len(expected):
        return CheckReport(ok=False, message=f"kernel returned {len(outputs)} outputs, expected {len(expected)}")
    worst = CheckReport(ok=True, rel_l2=0.0, max_abs_err=0.0, max_rel_err=0.0)
    for i, (out, ref) in enumerate(zip(outputs, expected)):
        report = _compare_one(out, ref, rtol=rtol, label=f"output {i}")
        if not report.ok:
            return report
        if report.rel_l2 > worst.rel_l2:
            worst = report
    return worst


def _compare_one(out: object, ref: np.ndarray, *, rtol: float, label: str) -> CheckReport:
    if not isinstance(out, np.ndarray):
        try:
            out = np.asarray(out)
        except Exception as exc:  # an arbitrary object returned by a kernel
            return CheckReport(ok=False, message=f"{label}: not an array ({type(out).__name__}): {exc}")
    if out.dtype != np.float32:
        return CheckReport(ok=False, message=f"{label}: dtype {out.dtype}, expected float32 "
                                              "(reduced or changed precision is not allowed)")
    if out.size != ref.size:
        return CheckReport(ok=False, message=f"{label}: shape {out.shape} ({out.size} elements) cannot be "
                                              f"reshaped to the expected {ref.shape} ({ref.size} elements)")
    flat_out, flat_ref = out.reshape(-1), ref.reshape(-1)
    err_sq = ref_sq = 0.0
    max_abs = max_rel = 0.0
    nonfinite = 0
    for start in range(0, flat_ref.size, _CHUNK):
        o = flat_out[start:start + _CHUNK].astype(np.float64)
        r = flat_ref[start:start + _CHUNK].astype(np.float64)
        bad = ~np.isfinite(o)
        if bad.any():
            nonfinite += int(bad.sum())
            continue
        d = np.abs(o - r)
        err_sq += float(np.dot(d, d))
        ref_sq += float(np.dot(r, r))
        if d.size:
            max_abs = max(max_abs, float(d.max()))
            max_rel = max(max_rel, float((d / np.maximum(np.abs(r), 1e-30)).max()))
    if nonfinite:
        return CheckReport(ok=False, message=f"{label}: {nonfinite} of {flat_ref.size} elements are NaN or Inf "
                                              "(unwritten output elements read as NaN)")
    ref_norm = math.sqrt(ref_sq)
    rel = math.sqrt(err_sq) / ref_norm if ref_norm > 0 else math.sqrt(err_sq)
    ok = rel < rtol
    msg = "" if ok else (f"{label}: relative L2 error {rel:.3e} exceeds the tolerance {rtol:.0e} "
                         f"(max abs error {max_abs:.3e})")
    return CheckReport(ok=ok, rel_l2=rel, max_abs_err=max_abs, max_rel_err=max_rel, message=msg)
