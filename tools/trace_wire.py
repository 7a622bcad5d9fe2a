"""The instruction trace as plain JSON data, so it crosses from the sandbox to the trusted side.

The sandbox returns the trace as data, never as pickles (unpickling runs code); the trusted side
rebuilds `TraceEvent`s with type checks and a size cap, then runs the performance model itself,
so a kernel cannot hand back a latency, only a trace that the parent checks for consistency.
"""
from __future__ import annotations

from typing import Any

from accelopt_graph.tools.nkisim.trace import Access, Buffer, Engine, LoopFrame, LoopKind, TraceEvent


class TraceFormatError(ValueError):
    """The sandbox returned a trace that is not well-formed data."""


def _access_row(a: Access) -> list:
    return [a.tensor_id, a.buffer.value, a.dtype, a.nbytes, a.partitions, a.free_elems,
            [list(r) for r in a.region], a.contiguous_bytes, a.name]


def encode_trace(events: list[TraceEvent]) -> list[list]:
    """Turn events into JSON-ready rows (runs in the sandbox)."""
    return [[e.op, e.engine.value, [_access_row(a) for a in e.reads],
             [_access_row(a) for a in e.writes], e.dtype, e.partitions, e.free_size,
             [[f.loop_id, f.kind.value, f.iteration, f.trip_count] for f in e.loops],
             e.line, e.file, _plain(e.attrs)] for e in events]


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def _int(v: Any) -> int:
    if type(v) is not int:
        raise TraceFormatError(f"expected int, got {type(v).__name__}")
    return v


def _str(v: Any) -> str:
    if type(v) is not str:
        raise TraceFormatError(f"expected str, got {type(v).__name__}")
    return v


def _access(row: Any) -> Access:
    if not isinstance(row, list) or len(row) != 9:
        raise TraceFormatError("access row must be a list of 9 fields")
    tid, buf, dtype, nbytes, parts, free, region, contig, name = row
    try:
        buffer = Buffer(buf)
    except ValueError as exc:
        raise TraceFormatError(str(exc)) from exc
    return Access(_int(tid), buffer, _str(dtype), _int(nbytes), _int(parts), _int(free),
                  tuple((_int(a), _int(b)) for a, b in region), _int(contig), _str(name))


def decode_trace(rows: Any, *, max_events: int) -> list[TraceEvent]:
    """Rebuild and type-check events from JSON rows (runs on the trusted side)."""
    if not isinstance(rows, list):
        raise TraceFormatError("trace must be a list")
    if len(rows) > max_events:
        raise TraceFormatError(f"trace has {len(rows)} events, more than the cap {max_events}")
    events = []
    for row in rows:
        if not isinstance(row, list) or len(row) != 11:
            raise TraceFormatError("event row must be a list of 11 fields")
        op, engine, reads, writes, dtype, parts, free, loops, line, file, attrs = row
        try:
            eng = Engine(engine)
            frames = tuple(LoopFrame(_int(i), LoopKind(k), _int(it), _int(n)) for i, k, it, n in loops)
        except (ValueError, TypeError) as exc:
            raise TraceFormatError(str(exc)) from exc
        if not isinstance(attrs, dict):
            raise TraceFormatError("attrs must be an object")
        events.append(TraceEvent(_str(op), eng, tuple(_access(a) for a in reads),
                                 tuple(_access(a) for a in writes), _str(dtype), _int(parts),
                                 _int(free), frames, _int(line), _str(file), attrs))
    return events
