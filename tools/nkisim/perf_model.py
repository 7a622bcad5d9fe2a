"""Instruction-level NeuronCore performance model: time a simulator trace (trainium.md §2, §7.17).

`estimate_latency(trace, spec)` is a pure function of the `TraceEvent` list and a `HardwareSpec`:

1. every instruction gets an engine occupancy and a completion latency from the documented ISA cost
   formulas (`perf_costs`); DMA transfers are split over the DMA engines and HBM (`perf_dma`);
2. SBUF capacity is checked with a Belady allocator; what does not fit becomes spill save/reload DMA
   traffic (`perf_spill`);
3. a list scheduler walks the trace in program order, like the compiler building a static schedule:
   an instruction takes the earliest idle slot of its engine (`perf_resources.Timeline`) after its
   producers (RAW/WAR/WAW on intersecting tile regions) are done, a PSUM bank is free, trn1's shared
   SBUF/PSUM ports allow it, and the previous iteration of each enclosing `sequential_range` ended.

The makespan is `total_s`. Numbers are estimates (source = "simulator"), never measurements.
"""
from __future__ import annotations

import gc
import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from accelopt_graph.tools.nkisim.hardware import HardwareSpec, get_spec
from accelopt_graph.tools.nkisim.perf_costs import (
    COMPUTE_TRACKS,
    COST_RULES,
    FLEXIBLE_OPS,
    InstrCost,
    engine_choices,
    engine_options,
    instruction_cost,
    itemsize,
    matmul_shape,
)
from accelopt_graph.tools.nkisim.perf_dma import DmaCost, dma_cost, dma_transfer_cost
from accelopt_graph.tools.nkisim.perf_resources import PsumBanks, TensorState, Timeline
from accelopt_graph.tools.nkisim.perf_spill import SpillPlan, SpillTransfer, spill_plan
from accelopt_graph.tools.nkisim.trace import Access, Buffer, Engine, LoopKind, TraceEvent

# The Access fields the cost rules read (everything but tensor id, region and name).
_access_cost_key = operator.attrgetter("buffer", "dtype", "nbytes", "partitions", "free_elems",
                                       "contiguous_bytes", "inner_stride_bytes")

# The Access fields `dma_cost` reads, less the region, of which it only reads the extents.
_access_dma_key = operator.attrgetter("buffer", "nbytes", "partitions", "free_elems", "contiguous_bytes")

COST_MODEL_VERSION = "nkisim-perf-1"


class Slice(NamedTuple):
    """One scheduled instruction or transfer (a timeline slice)."""

    track: str
    name: str
    start_s: float
    end_s: float
    busy_s: float
    event: int  # index into the trace; -1 for inserted spill transfers
    line: int
    nbytes: int
    kind: str  # compute | load | store | sbuf_copy | hbm_copy | spill_save | spill_reload


@dataclass
class DmaStats:
    transfers: int = 0
    total_bytes: int = 0
    descriptors: int = 0
    bytes_by_kind: dict[str, int] = field(default_factory=dict)
    count_by_kind: dict[str, int] = field(default_factory=dict)
    queue_busy_s: dict[str, float] = field(default_factory=dict)
    engine_busy_s: float = 0.0  # summed over the DMA engines
    engines: int = 16
    hbm_busy_s: float = 0.0

    @property
    def average_bytes(self) -> float:
        return self.total_bytes / self.transfers if self.transfers else 0.0


@dataclass
class LatencyBreakdown:
    """What the model says about one kernel run."""

    hardware: str
    total_s: float
    engine_busy_s: dict[str, float]
    engine_active_s: dict[str, float]
    engine_instructions: dict[str, int]
    dma: DmaStats
    spill: SpillPlan
    slices: list[Slice]
    cost_model_version: str = COST_MODEL_VERSION

    @property
    def total_ms(self) -> float:
        return self.total_s * 1e3

    @property
    def bottleneck(self) -> str:
        """The resource busiest relative to the makespan (an engine, 'dma' or 'hbm')."""
        loads = dict(self.engine_busy_s)
        loads["hbm"] = self.dma.hbm_busy_s
        loads["dma"] = self.dma.engine_busy_s / max(1, self.dma.engines)
        return max(sorted(loads), key=lambda k: loads[k]) if loads else "none"


class _Scheduler:
    def __init__(self, spec: HardwareSpec) -> None:
        self.spec = spec
        self.engine_free = dict.fromkeys(COMPUTE_TRACKS, 0.0)  # in-order issue: one pointer each
        self.ports = {"sbuf_vector_gpsimd": Timeline(), "psum_vector_scalar": Timeline()}
        self.queue_free = [0.0] * spec.dma_queues
        self.queue_names = [f"dma_q{q}" for q in range(spec.dma_queues)]
        self.rings = [Timeline()]
        self.rings_uniform = True
        self.hbm = Timeline()
        self.tensors: dict[int, TensorState] = {}
        self.seq: dict[int, list] = {}  # loop_id -> [iteration, max_end of it, barrier]
        self.slices: list[Slice] = []
        self.busy = dict.fromkeys(COMPUTE_TRACKS, 0.0)
        self.count = dict.fromkeys(COMPUTE_TRACKS, 0)
        self.dma = DmaStats(engines=spec.dma_engines)
        self.last_write_end: dict[int, float] = {}  # tensor -> end of its latest write (spills)
        self.track_write_end = True  # only spill saves read last_write_end: off when there are none
        self.saved_end: dict[int, float] = {}
        self.psum = PsumBanks(spec)
        self.last_access: dict[int, int] = {}
        self.last_write: dict[int, int] = {}
        self.cost_cache: dict[tuple, InstrCost] = {}
        self.dma_cache: dict[tuple, DmaCost] = {}

    def cost(self, ev: TraceEvent, engine: Engine | None = None) -> InstrCost:
        """`instruction_cost` of `ev` (on `engine` if given), memoised on everything the cost rules
        read (not tensor ids, regions, names, lines or loops), so repeated tiles are priced once."""
        if engine is None:
            engine = ev.engine
        try:
            key = (ev.op, engine, ev.dtype, ev.partitions, ev.free_size,
                   tuple([(k, v.__class__, v) for k, v in ev.attrs.items()]),
                   tuple(map(_access_cost_key, ev.reads)), tuple(map(_access_cost_key, ev.writes)))
            c = self.cost_cache.get(key)
        except TypeError:  # an unhashable attribute value: price it directly
            return instruction_cost(ev if engine is ev.engine else replace(ev, engine=engine), self.spec)
        if c is None:
            c = self.cost_cache[key] = instruction_cost(
                ev if engine is ev.engine else replace(ev, engine=engine), self.spec)
        return c

    def dma_cost(self, ev: TraceEvent) -> DmaCost:
        """`dma_cost` of `ev`, memoised on everything it reads (op, dtype, partitions, the transpose
        attribute and each access's buffer, sizes, contiguity and region extents)."""
        key = (ev.op, ev.dtype, ev.partitions, bool(ev.attrs.get("transpose")),
               tuple([(_access_dma_key(a), tuple([hi - lo for lo, hi in a.region])) for a in ev.reads]),
               tuple([(_access_dma_key(a), tuple([hi - lo for lo, hi in a.region])) for a in ev.writes]))
        c = self.dma_cache.get(key)
        if c is None:
            c = self.dma_cache[key] = dma_cost(ev, self.spec)
        return c

    def _state(self, tid: int) -> TensorState:
        st = self.tensors.get(tid)
        if st is None:
            st = self.tensors[tid] = TensorState()
        return st

    def read_ready(self, a: Access, track: str) -> float:
        st = self.tensors.get(a.tensor_id)
        if st is None or not st.writes:
            return 0.0
        ready = 0.0
        values = st.writes.values
        for wreg in st.writes.overlapping(a.region):
            end, issue_end, wtrack = values[wreg]
            # PE accumulation into PSUM is near-memory and in-order: no round trip (S1).
            t = issue_end if (wtrack == track == "tensor") else end
            if t > ready:
                ready = t
        return ready

    def write_ready(self, a: Access, track: str) -> float:
        st = self.tensors.get(a.tensor_id)
        if st is None:
            return 0.0
        ready = 0.0
        values = st.writes.values
        for wreg in st.writes.overlapping(a.region):
            end, issue_end, wtrack = values[wreg]
            t = issue_end if wtrack == track else end  # same in-order engine keeps WAW order
            if t > ready:
                ready = t
        rvalues = st.reads.values
        for rreg in st.reads.overlapping(a.region):
            if rvalues[rreg] > ready:
                ready = rvalues[rreg]
        return ready

    def plan(self, trace: Sequence[TraceEvent]) -> None:
        """Note each tensor's last access and last write: state nobody will consult is not kept."""
        for i, ev in enumerate(trace):
            for a in ev.reads:
                self.last_access[a.tensor_id] = i
            for a in ev.writes:
                self.last_access[a.tensor_id] = i
                self.last_write[a.tensor_id] = i
        self.psum.plan(trace)

    def record(self, index: int, ev_reads: Sequence[Access], ev_writes: Sequence[Access], end: float,
               issue_end: float, track: str) -> None:
        last_write, last_access = self.last_write, self.last_access
        for a in ev_reads:
            if last_write.get(a.tensor_id, -1) <= index:
                continue  # never written again: no WAR dependency can refer to this read
            st = self._state(a.tensor_id)
            if st.reads.get(a.region, -1.0) < end:
                st.reads[a.region] = end
        last_write_end = self.last_write_end if self.track_write_end else None
        for a in ev_writes:
            if last_write_end is not None and last_write_end.get(a.tensor_id, 0.0) < end:
                last_write_end[a.tensor_id] = end
            if last_access.get(a.tensor_id, -1) <= index:
                continue  # never touched again
            st = self._state(a.tensor_id)
            region = a.region
            if st.writes:
                st.writes.remove_covered(region, keep_self=True)  # overwritten just below
            if st.reads:
                st.reads.remove_covered(region)
            st.writes[region] = (end, issue_end, track)

    def seq_barrier(self, ev: TraceEvent) -> float:
        barrier = 0.0
        for fr in ev.loops:
            if fr.kind is not LoopKind.SEQUENTIAL:
                continue
            st = self.seq.get(fr.loop_id)
            if st is None or st[0] != fr.iteration:
                prev_end = st[1] if st is not None else 0.0
                consecutive = st is not None and fr.iteration == st[0] + 1
                st = self.seq[fr.loop_id] = [fr.iteration, 0.0, prev_end if consecutive else 0.0]
            barrier = max(barrier, st[2])
        return barrier

    def seq_done(self, ev: TraceEvent, end: float) -> None:
        for fr in ev.loops:
            if fr.kind is LoopKind.SEQUENTIAL:
                st = self.seq[fr.loop_id]
                if end > st[1]:
                    st[1] = end

    # -- resources ---------------------------------------------------------------------------
    def run_compute(self, ev: TraceEvent, index: int, ready: float) -> tuple[str, float, float]:
        """Schedule a compute instruction; returns (track, end, issue end)."""
        engines = engine_options(ev)
        uses = self._port_use(ev)
        if len(engines) > 1:
            # The compiler places engine-agnostic work (observed, trainium.md §5.4.6): take the engine
            # that finishes the instruction first.
            options = []
            for e in engines:
                c = self.cost(ev, e)
                ports = self._ports_for(e._value_, uses)
                start = self._slot(e._value_, ready, c.busy_s, ports)
                options.append((start + c.busy_s, len(options), c, start, ports))
            _, _, cost, start, ports = min(options)
        else:
            cost = self.cost(ev)
            track = ev.engine._value_
            ports = self._ports_for(track, uses)
            start = self._slot(track, ready, cost.busy_s, ports)
        track = cost.track
        busy = cost.busy_s
        for p in ports:
            p.reserve(start, busy)
        issue_end = start + busy
        self.engine_free[track] = issue_end
        end = issue_end + cost.latency_s
        self.busy[track] += busy
        self.count[track] += 1
        self.slices.append(Slice(track, ev.op, start, end, busy, index, ev.line, 0, "compute"))
        return track, end, issue_end

    def _slot(self, track: str, ready: float, busy: float, ports: list[Timeline]) -> float:
        """Earliest start at or after `ready` once the engine has issued everything before it (each
        engine's sequencer runs its instruction stream in order, S1) and, on trn1, the shared
        SBUF/PSUM port (S1) is idle for `busy`."""
        start = max(ready, self.engine_free[track])
        if not ports:
            return start
        for _ in range(16):
            t = start
            for r in ports:
                t = r.earliest(t, busy)[0]
            if t == start:
                break
            start = t
        return start

    def _port_use(self, ev: TraceEvent) -> tuple[bool, bool]:
        """Whether the instruction touches SBUF / PSUM."""
        sbuf = psum = False
        # Enum hashing is slow in CPython; identity checks keep this on the fast path.
        for accesses in (ev.reads, ev.writes):
            for a in accesses:
                b = a.buffer
                if b is Buffer.SBUF:
                    sbuf = True
                elif b is Buffer.PSUM:
                    psum = True
        return sbuf, psum

    def _ports_for(self, track: str, uses: tuple[bool, bool]) -> list[Timeline]:
        spec = self.spec
        ports = []
        if track == "tensor":
            return ports
        if uses[0] and spec.sbuf_vector_gpsimd_exclusive and track != "scalar":
            ports.append(self.ports["sbuf_vector_gpsimd"])
        if uses[1] and spec.psum_vector_scalar_exclusive and track != "gpsimd":
            ports.append(self.ports["psum_vector_scalar"])
        return ports

    def run_dma(self, cost: DmaCost, ready: float, *, name: str, index: int, line: int) -> float:
        spec = self.spec
        q = self._pick_queue(ready)
        start = max(ready, self.queue_free[q])
        if cost.engines >= spec.dma_engines:
            # Full-width transfers use every engine alike; one shared timeline stands for all 16
            # until a narrower transfer makes them differ.
            chosen = [self.rings[0]] if self.rings_uniform else self.rings
        else:
            if self.rings_uniform:
                self.rings = [self.rings[0]] + [self.rings[0].copy() for _ in range(spec.dma_engines - 1)]
                self.rings_uniform = False
            # Narrow transfers go to the engines whose booked work ends first (ties: lowest index).
            tails = sorted((r.ends[-1] if r.ends else 0.0, j) for j, r in enumerate(self.rings))
            chosen = [self.rings[j] for _, j in tails[:cost.engines]]
        data_end = start
        for ring in chosen:
            data_end = max(data_end, ring.fill(start, cost.engine_s)[1])
        if cost.hbm_s > 0:
            data_end = max(data_end, self.hbm.fill(start, cost.hbm_s)[1])
        self.queue_free[q] = data_end
        # The fixed ~0.2 us per transfer (S7) is latency: descriptors of later transfers pipeline.
        end = data_end + spec.dma_fixed_latency_s
        track = self.queue_names[q]
        d = self.dma
        d.transfers += 1
        d.total_bytes += cost.nbytes
        d.descriptors += cost.descriptors
        d.bytes_by_kind[cost.kind] = d.bytes_by_kind.get(cost.kind, 0) + cost.nbytes
        d.count_by_kind[cost.kind] = d.count_by_kind.get(cost.kind, 0) + 1
        d.queue_busy_s[track] = d.queue_busy_s.get(track, 0.0) + (data_end - start)
        d.engine_busy_s += cost.engine_s * cost.engines
        d.hbm_busy_s += cost.hbm_s
        self.slices.append(Slice(track, name, start, end, data_end - start, index, line, cost.nbytes,
                                 cost.kind))
        return end

    def _pick_queue(self, ready: float) -> int:
        """The lowest-numbered queue idle at `ready`, else the one that frees up first."""
        best, best_free = 0, math.inf
        for j, free in enumerate(self.queue_free):
            if free <= ready:
                return j
            if free < best_free:
                best, best_free = j, free
        return best

    def run_spill(self, transfers: Sequence[SpillTransfer], ready: float, *, save: bool,
                  index: int, line: int) -> float:
        done = ready
        spec = self.spec
        for s in transfers:
            kind = "spill_save" if save else "spill_reload"
            cost = dma_transfer_cost(nbytes=s.nbytes, partitions=s.partitions,
                                     chunk_bytes=s.nbytes // max(1, s.partitions), touches_hbm=True,
                                     spec=spec, kind=kind)
            dep = self.last_write_end.get(s.tensor_id, 0.0) if save else self.saved_end.get(
                s.tensor_id, 0.0)
            end = self.run_dma(cost, dep, name=kind, index=-1, line=line)
            if save:
                self.saved_end[s.tensor_id] = end
            done = max(done, end)
        return done


def estimate_latency(trace: Sequence[TraceEvent], spec: HardwareSpec | str = "trn1") -> LatencyBreakdown:
    """Schedule `trace` on `spec` and return the makespan with per-engine and DMA statistics."""
    if isinstance(spec, str):
        spec = get_spec(spec)
    # The model allocates a few objects per event and keeps them (slices, tensor states), so CPython's
    # cyclic GC would rescan the growing heap over and over (~30% of the time on a 500k-event trace).
    # Nothing here builds reference cycles; pause the collector and restore it however we exit.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _estimate_latency(trace, spec)
    finally:
        if gc_was_enabled:
            gc.enable()


def _estimate_latency(trace: Sequence[TraceEvent], spec: HardwareSpec) -> LatencyBreakdown:
    plan = spill_plan(trace, spec)
    sch = _Scheduler(spec)
    sch.track_write_end = bool(plan.saves)
    sch.plan(trace)
    makespan = 0.0
    # Bound once: attribute and global lookups are most of the per-event overhead in CPython.
    none_engine, dma_engine = Engine.NONE, Engine.DMA
    saves, reloads = plan.saves, plan.reloads
    seq_barrier, seq_done = sch.seq_barrier, sch.seq_done
    psum_ready, psum_done = sch.psum.ready, sch.psum.done
    read_ready, write_ready = sch.read_ready, sch.write_ready
    run_spill, run_dma, run_compute, record = sch.run_spill, sch.run_dma, sch.run_compute, sch.record
    dma_cost_of = sch.dma_cost
    for i, ev in enumerate(trace):
        engine = ev.engine
        if engine is none_engine:
            continue
        track = engine._value_
        ready = seq_barrier(ev)
        if engine is not dma_engine:
            ready = max(ready, psum_ready(ev, i))
        if saves and i in saves:  # space for this instruction's operands is free once the save is done
            ready = max(ready, run_spill(saves[i], 0.0, save=True, index=i, line=ev.line))
        if reloads and i in reloads:
            ready = max(ready, run_spill(reloads[i], 0.0, save=False, index=i, line=ev.line))
        reads, writes = ev.reads, ev.writes
        for a in reads:
            t = read_ready(a, track)
            if t > ready:
                ready = t
        for a in writes:
            t = write_ready(a, track)
            if t > ready:
                ready = t
        if engine is dma_engine:
            end = run_dma(dma_cost_of(ev), ready, name=ev.op, index=i, line=ev.line)
            issue_end = end
        else:
            track, end, issue_end = run_compute(ev, i, ready)
        record(i, reads, writes, end, issue_end, track)
        seq_done(ev, end)
        psum_done(ev, end)
        if end > makespan:
            makespan = end
    for s in sch.slices:  # spill saves may finish after the last instruction
        makespan = max(makespan, s.end_s)
    by_track: dict[str, list[tuple[float, float]]] = {t: [] for t in COMPUTE_TRACKS}
    for s in sch.slices:  # one pass, slices kept in schedule order per track
        spans = by_track.get(s.track)
        if spans is not None:
            spans.append((s.start_s, s.end_s))
    active = {t: _union_length(by_track[t]) for t in COMPUTE_TRACKS}
    return LatencyBreakdown(hardware=spec.name, total_s=makespan, engine_busy_s=dict(sch.busy),
                            engine_active_s=active, engine_instructions=dict(sch.count), dma=sch.dma,
                            spill=plan, slices=sch.slices)


def _union_length(intervals: list[tuple[float, float]]) -> float:
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        elif e > cur_e:
            cur_e = e
    if cur_e is not None:
        total += cur_e - cur_s
    return total


# The model's pieces live in perf_costs / perf_dma / perf_spill / perf_resources; they are re-exported
# here so `perf_model` stays the one import for callers.
__all__ = [
    "COMPUTE_TRACKS", "COST_MODEL_VERSION", "COST_RULES", "FLEXIBLE_OPS", "DmaCost", "DmaStats",
    "InstrCost", "LatencyBreakdown", "Slice", "SpillPlan", "SpillTransfer", "Timeline", "dma_cost",
    "dma_transfer_cost", "engine_choices", "estimate_latency", "instruction_cost", "itemsize",
    "matmul_shape", "spill_plan",
]
