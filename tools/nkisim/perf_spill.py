"""SBUF capacity: which data cannot stay on chip, as spill save/reload transfers (trainium.md §3.7)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from accelopt_graph.tools.nkisim.hardware import HardwareSpec
from accelopt_graph.tools.nkisim.trace import Access, Buffer, TraceEvent


@dataclass(frozen=True, slots=True)
class SpillTransfer:
    tensor_id: int
    nbytes: int
    partitions: int


@dataclass
class SpillPlan:
    """Spill transfers to insert before given event indices, and the live-SBUF peak."""

    saves: dict[int, list[SpillTransfer]] = field(default_factory=dict)
    reloads: dict[int, list[SpillTransfer]] = field(default_factory=dict)
    peak_bytes_per_partition: int = 0
    save_bytes: int = 0
    reload_bytes: int = 0


def liveness_unit(a: Access) -> tuple[int, ...]:
    """What SBUF allocation tracks for an access: the tensor, or one block of a block-dim tensor.

    Leading dims of extent 1 in front of the partition dim are NKI block dims (`par_dim`); the
    compiler backs each block with its own buffer and need not keep all of them live (S15).
    """
    region = a.region
    if len(region) < 2 or a.partitions <= 1:
        return (a.tensor_id,)
    for d, (lo, hi) in enumerate(region):
        if hi - lo == a.partitions:
            if d == 0 or any(stop - start != 1 for start, stop in region[:d]):
                return (a.tensor_id,)
            return (a.tensor_id,) + tuple(lo for lo, _ in region[:d])
    return (a.tensor_id,)


def _sbuf_units(trace: Sequence[TraceEvent]) -> tuple[list[dict[tuple, int]], dict[tuple, tuple[int, int]]]:
    """Per event: SBUF unit -> 1 read / 2 written / 3 both; per unit: (bytes per partition, partitions).

    A unit's footprint is the bounding box of everything accessed in it.
    """
    touches: list[dict[tuple, int]] = []
    box: dict[tuple, list[list[int]]] = {}
    size: dict[tuple, tuple[float, int, int]] = {}  # itemsize, partitions, max per-partition bytes
    sbuf = Buffer.SBUF
    seen: dict[int, tuple] = {}  # id(Access) -> unit: the simulator shares repeated Access objects
    for ev in trace:
        touched: dict[tuple, int] = {}
        for flag, accesses in ((1, ev.reads), (2, ev.writes)):
            for a in accesses:
                if a.buffer is not sbuf:
                    continue
                unit = seen.get(id(a))
                if unit is not None:  # same object, same region: its footprint is already counted
                    touched[unit] = touched.get(unit, 0) | flag
                    continue
                region = a.region
                if len(region) >= 2 and a.partitions > 1 and region[0][1] - region[0][0] == a.partitions:
                    unit = (a.tensor_id,)  # liveness_unit's common case: partition dim first
                else:
                    unit = liveness_unit(a)
                seen[id(a)] = unit
                touched[unit] = touched.get(unit, 0) | flag
                parts = a.partitions or 1
                prev = size.get(unit)
                item = a.nbytes / max(1, parts * a.free_elems)
                pp = a.nbytes // parts
                if prev is None:
                    size[unit] = (item, parts, pp)
                    if a.region:
                        box[unit] = [[lo, hi] for lo, hi in a.region]
                    continue
                if prev[2] < pp or prev[1] < parts or prev[0] < item:
                    size[unit] = (max(prev[0], item), max(prev[1], parts), max(prev[2], pp))
                b = box.get(unit)
                if b is not None and len(b) == len(a.region):
                    for dim, (lo, hi) in zip(b, a.region):
                        if lo < dim[0]:
                            dim[0] = lo
                        if hi > dim[1]:
                            dim[1] = hi
        touches.append(touched)
    foot = {}
    for unit, (item, parts, pp) in size.items():
        b = box.get(unit)
        if b:
            volume = math.prod(max(0, hi - lo) for lo, hi in b)
            pp = max(pp, int(volume * item / max(1, parts)))
        foot[unit] = (pp, parts)
    return touches, foot


def spill_plan(trace: Sequence[TraceEvent], spec: HardwareSpec) -> SpillPlan:
    """Simulate SBUF residency in program order; evict the farthest-next-use unit when full.

    A unit (tensor or block) is live from its first to its last access: the compiler reuses its space
    afterwards. Evicting a unit that is still needed saves it to HBM (if it changed since its last
    save) and reloads it before its next read: the `spill_save_bytes` / `spill_reload_bytes` counters.
    """
    touches, foot = _sbuf_units(trace)
    uses: dict[tuple, list[int]] = {}
    for i, touched in enumerate(touches):
        for unit in touched:
            uses.setdefault(unit, []).append(i)
    cursor = dict.fromkeys(uses, 0)
    capacity = spec.sbuf_bytes_per_partition
    resident: dict[tuple, int] = {}  # unit -> bytes per partition
    dirty: set[tuple] = set()
    spilled: set[tuple] = set()
    used = 0
    plan = SpillPlan()
    end_of_trace = len(trace)

    def next_use(unit: tuple) -> int:
        pos = uses[unit]
        return pos[cursor[unit]] if cursor[unit] < len(pos) else end_of_trace

    for i, touched in enumerate(touches):
        if not touched:
            continue
        for unit in touched:
            cursor[unit] += 1
        for unit, flags in touched.items():
            if unit in resident:
                continue
            pp, parts = foot[unit]
            while used + pp > capacity:
                victims = [u for u in resident if u not in touched]
                if not victims:
                    break  # the instruction's own operands exceed SBUF: nothing sensible to evict
                victim = max(victims, key=lambda u: (next_use(u), u))
                vpp, vparts = foot[victim]
                used -= resident.pop(victim)
                if next_use(victim) < end_of_trace:
                    spilled.add(victim)
                    if victim in dirty:
                        plan.saves.setdefault(i, []).append(SpillTransfer(victim[0], vpp * vparts, vparts))
                        plan.save_bytes += vpp * vparts
                        dirty.discard(victim)
            if unit in spilled and flags & 1:
                plan.reloads.setdefault(i, []).append(SpillTransfer(unit[0], pp * parts, parts))
                plan.reload_bytes += pp * parts
            spilled.discard(unit)
            resident[unit] = pp
            used += pp
        if used > plan.peak_bytes_per_partition:
            plan.peak_bytes_per_partition = used
        # One pass: mark written units dirty, then free the units this event uses for the last time.
        for unit, flags in touched.items():
            if flags & 2:
                dirty.add(unit)
            if cursor[unit] >= len(uses[unit]) and unit in resident:
                used -= resident.pop(unit)
                dirty.discard(unit)
    return plan


__all__ = ["SpillPlan", "SpillTransfer", "liveness_unit", "spill_plan"]
