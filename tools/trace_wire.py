"""The instruction trace as plain JSON data, so it crosses from the sandbox to the trusted side.

The sandbox returns the trace as data, never as pickles (unpickling runs code); the trusted side
rebuilds `TraceEvent`s with per-field type checks and a size cap, then runs the performance model
itself, so a kernel cannot hand back a latency, only a trace that the parent checks. Rows follow
the dataclasses' field order, so fields added to trace.py travel without changes here, as long as
their annotation has a converter in `_CONVERTERS`.
"""
from __future__ import annotations

import threading
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
    """Reference (slow) decoder of one row; the generated decoders below must agree with it."""
    spec = fields(cls)
    if not isinstance(row, list) or len(row) != len(spec):
        raise TraceFormatError(f"{cls.__name__} row must be a list of {len(spec)} fields")
    try:
        return cls(*(_CONVERTERS[f.type](v) for f, v in zip(spec, row)))
    except (TypeError, ValueError) as exc:
        raise TraceFormatError(f"{cls.__name__}: {exc}") from exc


# Fast codecs, generated from the dataclasses' fields: a fine-tiled kernel traces ~10^5-10^6 events,
# and the generic per-value recursion above cost more than simulating them. Each field type maps to
# an inline expression; anything unexpected falls back to the generic helpers, so the rows and the
# errors stay the same as the reference codec's (tests compare both on real traces).
_ENUMS = {"Buffer": Buffer, "Engine": Engine, "LoopKind": LoopKind}
_ENCODE_EXPR = {
    "int": "({v} if type({v}) is int else _plain({v}))",
    "str": "({v} if type({v}) is str else _plain({v}))",
    "dict[str, Any]": "_plain_attrs({v})",
    "tuple[tuple[int, int], ...]": "_plain_pairs({v})",
    "tuple[Access, ...]": "[_encode_Access(x) for x in {v}]",
    "tuple[LoopFrame, ...]": "[_encode_LoopFrame(x) for x in {v}]",
    **{name: f"({{v}}.value if type({{v}}) is {name} else _plain({{v}}))" for name in _ENUMS},
}
_DECODE_EXPR = {
    "int": "({v} if type({v}) is int else _int({v}))",
    "str": "({v} if type({v}) is str else _str({v}))",
    "dict[str, Any]": "({v} if type({v}) is dict else _attrs({v}))",
    "tuple[tuple[int, int], ...]": "_decode_pairs({v})",
    "tuple[Access, ...]": "tuple([_decode_Access(x) for x in _list({v})])",
    "tuple[LoopFrame, ...]": "tuple([_decode_LoopFrame_cached(x) for x in _list({v})])",
    **{name: f"_{name}_BY_VALUE[{{v}}]" for name in _ENUMS},
}
_PRIMITIVE = (bool, int, float, str, type(None))


def _plain_attrs(value: Any) -> Any:
    if type(value) is dict:
        for k, v in value.items():
            if type(k) is not str or type(v) not in _PRIMITIVE:
                return _plain(value)
        return dict(value)
    return _plain(value)


def _int_pairs(value: Any, seq: type, pair: Callable[[int, int], Any], fallback: Callable[[Any], Any]) -> Any:
    """[pair(a, b), ...] when `value` is a `seq` of 2-item `seq`s of exact ints, else fallback(value)."""
    if type(value) is not seq:
        return fallback(value)
    out = []
    for item in value:
        if type(item) is seq and len(item) == 2:
            a, b = item
            if type(a) is int and type(b) is int:
                out.append(pair(a, b))
                continue
        return fallback(value)
    return out


def _plain_pairs(value: Any) -> Any:
    return _int_pairs(value, tuple, lambda a, b: [a, b], _plain)


def _decode_pairs(value: Any) -> tuple:
    return tuple(_int_pairs(value, list, lambda a, b: (a, b), _CONVERTERS["tuple[tuple[int, int], ...]"]))


def _generate(cls: type) -> None:
    """Define `_encode_<cls>` and `_decode_<cls>` in this module from the fields of `cls`."""
    spec = fields(cls)
    names = [f"a{i}" for i in range(len(spec))]
    enc = ", ".join(_ENCODE_EXPR[f.type].format(v=f"e.{f.name}") for f in spec)
    dec = ", ".join(_DECODE_EXPR[f.type].format(v=n) for f, n in zip(spec, names))
    source = (f"def _encode_{cls.__name__}(e):\n    return [{enc}]\n\n"
              f"def _decode_{cls.__name__}(row):\n"
              f"    if type(row) is not list or len(row) != {len(spec)}:\n"
              f"        raise TraceFormatError('{cls.__name__} row must be a list of {len(spec)} fields')\n"
              f"    {', '.join(names)}, = row\n"
              f"    try:\n"
              f"        return {cls.__name__}({dec})\n"
              f"    except TraceFormatError:\n"
              f"        raise\n"
              f"    except (TypeError, ValueError, KeyError):\n"
              f"        return _build({cls.__name__}, row)  # the reference decoder names the field\n")
    exec(compile(source, f"<trace_wire {cls.__name__}>", "exec"), globals())


for _name, _cls in _ENUMS.items():
    globals()[f"_{_name}_BY_VALUE"] = {m.value: m for m in _cls}
for _cls in (LoopFrame, Access, TraceEvent):
    _generate(_cls)
del _name, _cls

_CACHE = threading.local()  # per decoding thread: the evaluation pool decodes in threads


def _decode_LoopFrame_cached(row: Any) -> LoopFrame:
    """Events of one iteration share their loop frames; decode each distinct row once. Only rows of
    the exact types are cached (1.0 or True must still be refused, though they hash like 1)."""
    if type(row) is list and len(row) == 4:
        loop_id, kind, iteration, trips = row
        if type(loop_id) is int and type(kind) is str and type(iteration) is int and type(trips) is int:
            cache = _CACHE.frames
            key = (loop_id, kind, iteration, trips)
            hit = cache.get(key)
            if hit is None:
                hit = cache[key] = _decode_LoopFrame(row)
            return hit
    return _decode_LoopFrame(row)


def encode_trace(events: list[TraceEvent]) -> list[list]:
    """Turn events into JSON-ready rows (runs in the sandbox)."""
    return [_encode_TraceEvent(e) for e in events]


def decode_trace(rows: Any, *, max_events: int) -> list[TraceEvent]:
    """Rebuild and type-check events from JSON rows (runs on the trusted side)."""
    if len(_list(rows)) > max_events:
        raise TraceFormatError(f"trace has {len(rows)} events, more than the cap {max_events}")
    _CACHE.frames = {}
    try:
        return [_decode_TraceEvent(row) for row in rows]
    finally:
        _CACHE.frames = {}


def check_wire_format() -> None:
    """Raise if trace.py gained a field type this codec cannot check (run by the tests)."""
    for cls in (TraceEvent, Access, LoopFrame):
        missing = [f"{cls.__name__}.{f.name}: {f.type}" for f in fields(cls) if f.type not in _CONVERTERS]
        if missing:
            raise TypeError(f"trace_wire has no converter for {missing}")
