"""The instruction trace as plain JSON data, so it crosses from the sandbox to the trusted side.

The sandbox returns the trace as data, never as pickles (unpickling runs code); the trusted side
rebuilds `TraceEvent`s with per-field type checks and a size cap, then runs the performance model
itself, so a kernel cannot hand back a latency, only a trace that the parent checks. Rows follow
the dataclasses' field order, so fields added to trace.py travel without changes here, as long as
their annotation has a converter in `_CONVERTERS`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from enum import Enum
from typing import Any

from accelopt_graph.tools.nkisim.trace import Access, Buffer, Engine, LoopFrame, LoopKind, TraceEvent


class TraceFormatError(ValueError):
    """The sandbox returned a trace that is not well-formed data."""


def _int(v: Any) -> int:
    if type(v) is not int:
        raise TraceFormatError(f"expected int, got {type(v).__name__}")
    return v


def _str(v: Any) -> str:
    if type(v) is not str:
        raise TraceFormatError(f"expected str, got {type(v).__name__}")
    return v


def _enum(cls: type[Enum]) -> Callable[[Any], Enum]:
    def convert(v: Any) -> Enum:
        try:
            return cls(v)
        except ValueError as exc:
            raise TraceFormatError(str(exc)) from exc
    return convert


def _list(v: Any) -> list:
    if not isinstance(v, list):
        raise TraceFormatError(f"expected list, got {type(v).__name__}")
    return v


def _attrs(v: Any) -> dict:
    if not isinstance(v, dict):
        raise TraceFormatError("attrs must be an object")
    return v


_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "int": _int, "str": _str, "Buffer": _enum(Buffer), "Engine": _enum(Engine),
    "LoopKind": _enum(LoopKind), "dict[str, Any]": _attrs,
    "tuple[tuple[int, int], ...]": lambda v: tuple((_int(a), _int(b)) for a, b in _list(v)),
    "tuple[Access, ...]": lambda v: tuple(_build(Access, r) for r in _list(v)),
    "tuple[LoopFrame, ...]": lambda v: tuple(_build(LoopFrame, r) for r in _list(v)),
}


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (Access, LoopFrame)):
        return [_plain(getattr(value, f.name)) for f in fields(value)]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def _build(cls: type, row: Any) -> Any:
    spec = fields(cls)
    if not isinstance(row, list) or len(row) != len(spec):
        raise TraceFormatError(f"{cls.__name__} row must be a list of {len(spec)} fields")
    try:
        return cls(*(_CONVERTERS[f.type](v) for f, v in zip(spec, row)))
    except (TypeError, ValueError) as exc:
        raise TraceFormatError(f"{cls.__name__}: {exc}") from exc


def encode_trace(events: list[TraceEvent]) -> list[list]:
    """Turn events into JSON-ready rows (runs in the sandbox)."""
    return [[_plain(getattr(e, f.name)) for f in fields(TraceEvent)] for e in events]


def decode_trace(rows: Any, *, max_events: int) -> list[TraceEvent]:
    """Rebuild and type-check events from JSON rows (runs on the trusted side)."""
    if len(_list(rows)) > max_events:
        raise TraceFormatError(f"trace has {len(rows)} events, more than the cap {max_events}")
    return [_build(TraceEvent, row) for row in rows]


def check_wire_format() -> None:
    """Raise if trace.py gained a field type this codec cannot check (run by the tests)."""
    for cls in (TraceEvent, Access, LoopFrame):
        missing = [f"{cls.__name__}.{f.name}: {f.type}" for f in fields(cls) if f.type not in _CONVERTERS]
        if missing:
            raise TypeError(f"trace_wire has no converter for {missing}")
