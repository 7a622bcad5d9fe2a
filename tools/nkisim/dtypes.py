"""NKI dtypes as NumPy dtypes (bf16 and fp8 through `ml_dtypes`) and NKI's promotion rules.

Promotion follows trainium.md §3.2: float with int gives the float; two floats give the wider,
fp16 with bf16 gives fp32, e4m3 with e5m2 gives bf16; untyped Python scalars infer to fp32 / int32.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from .errors import SimCompileError

float32 = np.dtype(np.float32)
float16 = np.dtype(np.float16)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
tfloat32 = float32  # stored as fp32: the 10-bit mantissa is an engine-side format
float8_e4m3 = np.dtype(getattr(ml_dtypes, "float8_e4m3", ml_dtypes.float8_e4m3fn))
float8_e4m3fn = np.dtype(ml_dtypes.float8_e4m3fn)
float8_e5m2 = np.dtype(ml_dtypes.float8_e5m2)
int8, int16, int32 = np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32)
uint8, uint16, uint32 = np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.uint32)
bool_ = np.dtype(np.bool_)  # stored as one byte, like the hardware's uint8 predicate

NAMES = {
    "float32": float32, "float16": float16, "bfloat16": bfloat16, "tfloat32": tfloat32,
    "float8_e4m3": float8_e4m3, "float8_e4m3fn": float8_e4m3fn, "float8_e5m2": float8_e5m2,
    "int8": int8, "int16": int16, "int32": int32, "uint8": uint8, "uint16": uint16,
    "uint32": uint32, "bool_": bool_, "bool": bool_, "float64": float32, "int64": int32,
}

# Rank of float formats for promotion; equal ranks of different formats widen one step.
_FLOAT_RANK = {float8_e4m3: 1, float8_e4m3fn: 1, float8_e5m2: 1, float16: 2, bfloat16: 2, float32: 3}
_WIDEN = {1: bfloat16, 2: float32, 3: float32}


_TO_DTYPE: dict = {}  # value -> to_dtype(value), for the values seen (a handful per run)


def to_dtype(value, *, what: str = "dtype") -> np.dtype:
    """Normalise anything a kernel passes as a dtype (nl.float32, np.float32, 'bfloat16')."""
    try:
        hit = _TO_DTYPE.get(value)
    except TypeError:  # unhashable: not cached
        return _to_dtype(value, what)
    if hit is None:
        hit = _to_dtype(value, what)
        if len(_TO_DTYPE) < 256:
            _TO_DTYPE[value] = hit
    return hit


def _to_dtype(value, what: str) -> np.dtype:
    if isinstance(value, str):
        if value in NAMES:
            return NAMES[value]
        raise SimCompileError(f"unknown {what} {value!r}", code="err_unsupported_dtype")
    try:
        dt = np.dtype(value)
    except TypeError as exc:
        raise SimCompileError(f"{what} {value!r} is not a dtype", code="err_unsupported_dtype") from exc
    if dt == np.float64:  # NumPy default dtypes map onto the widest hardware type
        return float32
    if dt == np.int64:
        return int32
    return dt


def is_float(dt: np.dtype) -> bool:
    return dt in _FLOAT_RANK or dt.kind == "f"


def promote(*dtypes: np.dtype) -> np.dtype:
    """The result dtype of an operation on tensors of these dtypes (scalars: pass fp32/int32)."""
    first = dtypes[0]
    if all(d is first or d == first for d in dtypes):
        return first
    floats = {d for d in dtypes if is_float(d)}
    if floats:
        top = max(_FLOAT_RANK.get(d, 3) for d in floats)
        tops = {d for d in floats if _FLOAT_RANK.get(d, 3) == top}
        return next(iter(tops)) if len(tops) == 1 else _WIDEN[top]
    ints = [d for d in dtypes if d != bool_]
    if not ints:
        return bool_
    out = ints[0]
    for d in ints[1:]:
        if {out, d} == {int32, uint32}:
            return float32
        out = np.promote_types(out, d)
    return to_dtype(out)


def scalar_dtype(value) -> np.dtype:
    """Untyped Python scalars infer to the widest hardware type (trainium.md §3.2)."""
    if isinstance(value, (bool, np.bool_)):
        return uint8
    if isinstance(value, (int, np.integer)):
        return int32
    return float32


def fill_value(dt: np.dtype):
    """What fresh (uninitialised) memory holds: NaN for floats, 4 for ints, as AWS's simulator."""
    return np.nan if is_float(dt) else 4


_NAMES_CACHE: dict = {}


def name(d: np.dtype) -> str:
    """`d.name`, cached (NumPy computes it in Python on every access)."""
    n = _NAMES_CACHE.get(d)
    if n is None:
        n = _NAMES_CACHE[d] = d.name
    return n
