"""Scheduling resources: gap-filling busy timelines, tile-region dependency maps and PSUM banks."""
from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence

from accelopt_graph.tools.nkisim.hardware import HardwareSpec
from accelopt_graph.tools.nkisim.trace import Buffer, TraceEvent


class Timeline:
    """Busy intervals of a shared resource; `reserve` finds the earliest gap (out-of-order fill)."""

    __slots__ = ("starts", "ends")

    def __init__(self) -> None:
        self.starts: list[float] = []
        self.ends: list[float] = []

    def copy(self) -> Timeline:
        other = Timeline()
        other.starts, other.ends = list(self.starts), list(self.ends)
        return other

    def earliest(self, ready: float, dur: float) -> tuple[float, int]:
        starts, ends = self.starts, self.ends
        i = bisect_right(ends, ready)
        t = ready
        n = len(starts)
        while i < n and starts[i] < t + dur:
            if ends[i] > t:
                t = ends[i]
            i += 1
        return t, i

    def fill(self, ready: float, dur: float) -> tuple[float, float]:
        """Consume `dur` of free time from `ready` on, split over gaps; return (first start, end).

        Models a resource that interleaves its clients (DMA engines round-robin over their queues,
        S7): work ready early uses idle time even when later-ready work was booked first.
        """
        if dur <= 0:
            return ready, ready
        starts, ends = self.starts, self.ends
        n = len(starts)
        if (not n or ends[-1] <= ready) and dur > 1e-18:
            # Fast path, same result as below: `ready` is past every booked interval, so the one piece
            # is [ready, ready + dur), appended or, if it touches the last interval, extending it.
            end = ready + dur
            if n and ready <= ends[-1] + 1e-15:
                ends[-1] = end  # end >= ready >= ends[-1]
            else:
                starts.append(ready)
                ends.append(end)
            return ready, end
        if (dur > 1e-18 and starts[-1] <= ready < ends[-1]
                and (n == 1 or ends[-2] + 1e-15 < starts[-1])):
            # Fast path, same result as below: `ready` falls inside the last interval (which the merge
            # below would not join to the one before it), so the piece starts at its end and extends it.
            last_end = ends[-1]
            end = ends[-1] = last_end + dur
            return last_end, end
        i0 = i = bisect_right(ends, ready)
        t, remaining, pieces = ready, dur, []
        while remaining > 1e-18:
            if i < n and starts[i] <= t:
                if ends[i] > t:
                    t = ends[i]
                i += 1
                continue
            take = min(remaining, (starts[i] if i < n else math.inf) - t)
            if take > 0:
                pieces.append((t, t + take))
                remaining -= take
                t += take
        lo, hi = max(0, i0 - 1), min(n, i + 1)
        merged: list[list[float]] = []
        for a, b in sorted(list(zip(starts[lo:hi], ends[lo:hi])) + pieces):
            if merged and a <= merged[-1][1] + 1e-15:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        starts[lo:hi] = [a for a, _ in merged]
        ends[lo:hi] = [b for _, b in merged]
        return pieces[0][0], pieces[-1][1]

    def reserve(self, ready: float, dur: float) -> float:
        t, i = self.earliest(ready, dur)
        if dur <= 0:
            return t
        end = t + dur
        starts, ends = self.starts, self.ends
        # Merge with touching neighbours so back-to-back work stays one interval.
        if i > 0 and ends[i - 1] >= t - 1e-15:
            if i < len(starts) and starts[i] <= end + 1e-15:
                ends[i - 1] = ends[i]
                del starts[i], ends[i]
            else:
                ends[i - 1] = max(ends[i - 1], end)
        elif i < len(starts) and starts[i] <= end + 1e-15:
            starts[i] = t
        else:
            starts.insert(i, t)
            ends.insert(i, end)
        return t


def _intersects(a: tuple, b: tuple) -> bool:
    if a == b or not a or not b or len(a) != len(b):
        return True
    for (a0, a1), (b0, b1) in zip(a, b):
        if a0 >= b1 or b0 >= a1:
            return False
    return True


def _covers(outer: tuple, inner: tuple) -> bool:
    if not outer:
        return True
    if not inner or len(outer) != len(inner):
        return False
    return all(o0 <= i0 and i1 <= o1 for (o0, o1), (i0, i1) in zip(outer, inner))


class RegionMap:
    """Tile region -> value, with a grid index on the two leading dims so tile lookups stay O(tiles hit).

    The grid cell size is the extent of the first region stored (a kernel's tile size), so a tile-sized
    query touches one or a few cells however many tiles the tensor has.
    """

    __slots__ = ("values", "cells", "whole", "size")

    def __init__(self) -> None:
        self.values: dict[tuple, object] = {}
        self.cells: dict[tuple, set[tuple]] | None = None  # built once the map holds > 8 regions
        self.whole: set[tuple] = set()  # regions without a usable box: they match every query
        self.size: tuple[int, ...] | None = None

    def _keys(self, region: tuple) -> list[tuple] | None:
        size = self.size
        if not region or size is None or len(region) < len(size):
            return None
        lo, hi = region[0]
        s0 = size[0]
        a0, a1 = lo // s0, (max(lo, hi - 1)) // s0
        if len(size) == 1:
            return [(a,) for a in range(a0, a1 + 1)] if a1 - a0 < 4096 else None
        lo, hi = region[1]
        s1 = size[1]
        b0, b1 = lo // s1, (max(lo, hi - 1)) // s1
        if a0 == a1 and b0 == b1:
            return [(a0, b0)]
        if (a1 - a0 + 1) * (b1 - b0 + 1) > 4096:
            return None
        return [(a, b) for a in range(a0, a1 + 1) for b in range(b0, b1 + 1)]

    def __bool__(self) -> bool:
        return bool(self.values)

    def _index(self, region: tuple) -> None:
        keys = self._keys(region)
        if keys is None:
            self.whole.add(region)
        else:
            for k in keys:
                self.cells.setdefault(k, set()).add(region)

    def __setitem__(self, region: tuple, value: object) -> None:
        values = self.values
        if region not in values:
            if self.size is None and region:
                self.size = tuple(max(1, hi - lo) for lo, hi in region[:2])
            if self.cells is not None:
                self._index(region)
            elif len(values) >= 8:
                self.cells = {}
                for r in values:
                    self._index(r)
                self._index(region)
        values[region] = value

    def get(self, region: tuple, default=None):
        return self.values.get(region, default)

    def overlapping(self, region: tuple) -> list[tuple]:
        """Stored regions that intersect `region`."""
        if self.cells is None:
            return [r for r in self.values if _intersects(region, r)]
        keys = self._keys(region)
        if keys is None:
            return [r for r in self.values if _intersects(region, r)]
        if len(keys) == 1 and not self.whole:  # a tile-sized query: one grid cell
            c = self.cells.get(keys[0])
            # `r == region` first: _intersects' own first test, without the call (mostly the same tile).
            return [r for r in c if r == region or _intersects(region, r)] if c else []
        found = set(self.whole)
        cells = self.cells
        for k in keys:
            c = cells.get(k)
            if c:
                found.update(c)
        return [r for r in found if r == region or _intersects(region, r)]

    def remove_covered(self, region: tuple, *, keep_self: bool = False) -> None:
        """Drop the stored regions `region` covers; `keep_self` keeps `region` itself (the caller is
        about to store it again: same final state, without un-indexing and re-indexing it)."""
        for r in self.overlapping(region):
            if keep_self and r == region:
                continue
            if _covers(region, r):
                del self.values[r]
                if self.cells is None:
                    continue
                keys = self._keys(r)
                if keys is None:
                    self.whole.discard(r)
                else:
                    for k in keys:
                        self.cells[k].discard(r)


class TensorState:
    __slots__ = ("writes", "reads")

    def __init__(self) -> None:
        self.writes = RegionMap()  # region -> (end, issue_end, track)
        self.reads = RegionMap()  # region -> end; only scanned when the tensor is written again


class PsumBanks:
    """The 8 PSUM banks per partition (S1). A new PSUM tile waits until the tile whose bank(s) it
    takes is dead and its last access finished; this bounds how far TensorE runs ahead of evictions.
    """

    def __init__(self, spec: HardwareSpec) -> None:
        self.bank_bytes = spec.psum_bytes_per_partition // max(1, spec.psum_banks)
        self.occupant: list[int | None] = [None] * spec.psum_banks
        self.free_at = [0.0] * spec.psum_banks
        self.banks_of: dict[int, list[int]] = {}
        self.last_use: dict[int, int] = {}  # PSUM tensor -> index of its last access in the trace
        self.end: dict[int, float] = {}  # PSUM tensor -> latest end of its accesses so far

    def plan(self, trace: Sequence[TraceEvent]) -> None:
        for i, ev in enumerate(trace):
            for a in ev.reads + ev.writes:
                if a.buffer is Buffer.PSUM:
                    self.last_use[a.tensor_id] = i

    def ready(self, ev: TraceEvent, index: int) -> float:
        """Earliest start for `ev` as far as PSUM space goes; allocates banks for new tiles."""
        ready = 0.0
        for a in ev.writes:
            if a.buffer is not Buffer.PSUM or a.tensor_id in self.banks_of:
                continue
            need = max(1, -(-(a.nbytes // max(1, a.partitions)) // self.bank_bytes))
            banks = []
            for b, occ in enumerate(self.occupant):
                if occ is None or self.last_use.get(occ, -1) < index:
                    banks.append((self.free_at[b] if occ is None else self.end.get(occ, 0.0), b))
            if len(banks) < need:  # more live PSUM than exists: the interpreter reports it
                continue
            banks.sort()
            chosen = banks[:need]
            for t, b in chosen:
                if self.occupant[b] is not None:
                    self.banks_of.pop(self.occupant[b], None)
                self.occupant[b] = a.tensor_id
                self.free_at[b] = t
                ready = max(ready, t)
            self.banks_of[a.tensor_id] = [b for _, b in chosen]
        return ready

    def done(self, ev: TraceEvent, end: float) -> None:
        psum, ends = Buffer.PSUM, self.end
        for accesses in (ev.reads, ev.writes):  # no concatenated tuple per event
            for a in accesses:
                if a.buffer is psum and end > ends.get(a.tensor_id, 0.0):
                    ends[a.tensor_id] = end


__all__ = ["PsumBanks", "RegionMap", "TensorState", "Timeline"]
