"""Loop-carried dependencies across `affine_range` iterations, found in the trace.

`affine_range` promises independent iterations; the compiler (and the performance model) may
overlap or reorder them. A read of data that another iteration of the same loop wrote (RAW), or two
iterations writing the same elements (WAW), breaks the promise: the real compiler either rejects
it (`err_unexpected_output_dependencies`) or may compute wrong numbers, while an eager simulator
would quietly compute the sequential answer. Exempt, as NKI allows them: PSUM accumulation
(`acc += nc_matmul(...)`), read-modify-write updates of the same elements in one instruction
(`acc[...] = nl.add(acc, x)`: an associative reduction), and `nl.loop_reduce`.
"""
from __future__ import annotations

from .trace import LoopKind, TraceEvent


def affine_dependencies(trace: list[TraceEvent], limit: int = 3) -> list[str]:
    """Messages describing up to `limit` carried dependencies across affine_range iterations.

    Regions are matched exactly (the same tile written by two iterations, or read by one and
    written by another): linear in the trace. Partial overlaps are left to the shuffled-order check
    (`check_affine_iterations`)."""
    writes: dict[tuple, list] = {}  # (loop instance, tensor id, region) -> [iteration, line, rmw, multi]
    frames: dict[int, list] = {}  # id(loops tuple) -> [(instance, iteration)] of its affine loops
    found: list[str] = []
    seen = set()
    for ev in trace:
        loops = ev.loops
        if not loops or ev.attrs.get("api") == "nl.loop_reduce":
            continue
        affine = frames.get(id(loops))
        if affine is None:
            affine, prefix = [], ()
            for f in loops:
                if f.kind is LoopKind.AFFINE:
                    affine.append(((prefix, f.loop_id), f.iteration))
                prefix += (f.loop_id, f.iteration)
            frames[id(loops)] = affine
        if not affine:
            continue
        wids = [a.tensor_id for a in ev.writes]
        rmw_ids = [a.tensor_id for a in ev.reads if a.tensor_id in wids] if wids else ()
        accumulate = ev.attrs.get("accumulate")
        for inst, it in affine:
            for acc in ev.reads:
                if acc.tensor_id in rmw_ids:
                    continue
                w = writes.get((inst, acc.tensor_id, acc.region))
                if w is not None and (w[0] != it or w[3]) and ("RAW", w[1], ev.line) not in seen:
                    seen.add(("RAW", w[1], ev.line))
                    found.append(f"{ev.file}:{ev.line}: reads `{acc.name or 'a tensor'}` written by "
                                 f"another iteration of the same affine_range loop (line {w[1]}): "
                                 "a loop-carried dependency")
            if accumulate:
                continue
            for acc in ev.writes:
                rmw = acc.tensor_id in rmw_ids
                key = (inst, acc.tensor_id, acc.region)
                w = writes.get(key)
                if w is None:
                    writes[key] = [it, ev.line, rmw, False]
                elif w[0] != it:
                    w[3] = True
                    if not (rmw and w[2]) and ("WAW", w[1], ev.line) not in seen:
                        seen.add(("WAW", w[1], ev.line))
                        found.append(f"{ev.file}:{ev.line}: writes elements of "
                                     f"`{acc.name or 'a tensor'}` that another iteration of the "
                                     f"same affine_range loop also writes (line {w[1]})")
        if len(found) >= limit:
            break
    return found[:limit]
