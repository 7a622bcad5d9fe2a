"""Chrome trace-event JSON export of a scheduled kernel (opens in Perfetto and chrome://tracing).

One process for the NeuronCore, one thread (track) per compute engine and per DMA queue, one complete
("X") slice per instruction or transfer (its engine/queue occupancy), named by its NKI op and carrying
its source line. Times are microseconds, as the format requires.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from accelopt_graph.tools.nkisim.perf_model import COMPUTE_TRACKS, LatencyBreakdown
from accelopt_graph.tools.nkisim.trace import TraceEvent

_PID = 1


def _track_order(track: str) -> tuple[int, int]:
    if track in COMPUTE_TRACKS:
        return 0, COMPUTE_TRACKS.index(track)
    if track.startswith("dma_q") and track[5:].isdigit():
        return 1, int(track[5:])
    return 2, 0


def chrome_trace(breakdown: LatencyBreakdown, trace: Sequence[TraceEvent] = (), *,
                 kernel_name: str = "kernel") -> dict[str, Any]:
    """Build the trace-event document (a dict ready for `json.dump`)."""
    tracks = sorted({s.track for s in breakdown.slices}, key=_track_order)
    tids = {t: i + 1 for i, t in enumerate(tracks)}
    events: list[dict[str, Any]] = [
        {"ph": "M", "pid": _PID, "name": "process_name",
         "args": {"name": f"{kernel_name} on {breakdown.hardware} (simulated)"}},
    ]
    for track, tid in tids.items():
        events.append({"ph": "M", "pid": _PID, "tid": tid, "name": "thread_name", "args": {"name": track}})
        events.append({"ph": "M", "pid": _PID, "tid": tid, "name": "thread_sort_index",
                       "args": {"sort_index": tid}})
    for s in breakdown.slices:
        # Slices show engine/queue occupancy so a track never overlaps itself; the time until the
        # result is visible (fixed latency included) is in args.
        args: dict[str, Any] = {"line": s.line, "done_us": s.end_s * 1e6, "kind": s.kind}
        if s.nbytes:
            args["bytes"] = s.nbytes
        if 0 <= s.event < len(trace):
            ev = trace[s.event]
            args["file"] = ev.file
            args["dtype"] = ev.dtype
            args["partitions"] = ev.partitions
            args["free_size"] = ev.free_size
        name = f"{s.name} L{s.line}" if s.line else s.name
        events.append({"ph": "X", "pid": _PID, "tid": tids[s.track], "name": name, "cat": s.kind,
                       "ts": s.start_s * 1e6, "dur": max(0.0, s.busy_s * 1e6), "args": args})
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"source": "simulator", "hardware": breakdown.hardware,
                          "cost_model": breakdown.cost_model_version,
                          "total_time_us": breakdown.total_s * 1e6}}


def write_chrome_trace(path: str | Path, breakdown: LatencyBreakdown, trace: Sequence[TraceEvent] = (),
                       *, kernel_name: str = "kernel") -> Path:
    """Write the timeline to `path` and return it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        json.dump(chrome_trace(breakdown, trace, kernel_name=kernel_name), f)
    return path


__all__ = ["chrome_trace", "write_chrome_trace"]
