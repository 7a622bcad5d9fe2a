"""Instruction-level NeuronCore performance model: time a simulator trace (trainium.md §2, §7.17).

`estimate_latency(trace, spec)` is a pure function of the `TraceEvent` list and a `HardwareSpec`:

1. every instruction gets an engine occupancy (its initiation interval, from the documented ISA cost
   formulas) and a completion latency (fixed per-instruction and per-access overheads);
2. SBUF capacity is checked with a Belady (farthest-next-use) allocator; what does not fit becomes spill
   save/reload DMA traffic (`spill_plan`);
3. a list scheduler walks the trace in program order: an instruction starts when its in-order engine is
   free, its producers (RAW/WAR/WAW on intersecting tile regions) are done, shared ports allow it, and
   the previous iteration of each enclosing `sequential_range` has finished. DMA transfers go to one of
   16 FIFO queues, split over the 16 DMA engines and capped by HBM bandwidth.

The makespan is `total_s`. Numbers are estimates (source = "simulator"), never measurements.
"""
from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from accelopt_graph.tools.nkisim.hardware import HardwareSpec, get_spec
from accelopt_graph.tools.nkisim.trace import Access, Buffer, Engine, LoopKind, TraceEvent

COST_MODEL_VERSION = "nkisim-perf-1"

_ITEMSIZE = {
    "float32": 4, "fp32": 4, "tfloat32": 4, "tf32": 4, "int32": 4, "uint32": 4,
    "bfloat16": 2, "bf16": 2, "float16": 2, "fp16": 2, "int16": 2, "uint16": 2,
    "float8_e4m3": 1, "float8_e5m2": 1, "float8_e4m3fn": 1, "fp8": 1, "int8": 1, "uint8": 1,
    "bool": 1, "bool_": 1, "float64": 8, "int64": 8,
}
_SIXTEEN_BIT = {"bfloat16", "bf16", "float16", "fp16"}
_FP32 = {"float32", "fp32"}
_FP8 = {"float8_e4m3", "float8_e5m2", "float8_e4m3fn", "fp8"}

COMPUTE_TRACKS = ("tensor", "vector", "scalar", "gpsimd")


def itemsize(dtype: str) -> int:
    """Bytes per element of an NKI dtype name (numpy names accepted)."""
    name = str(dtype).removeprefix("nl.").removeprefix("numpy.").lower()
    if name not in _ITEMSIZE:
        raise ValueError(f"perf_model.itemsize: unknown dtype {dtype!r}; known: {sorted(_ITEMSIZE)}")
    return _ITEMSIZE[name]


def _norm_dtype(dtype: str) -> str:
    return str(dtype).removeprefix("nl.").removeprefix("numpy.").lower()


# ---------------------------------------------------------------------------------------------
# Per-instruction cost rules (cycles of the instruction's engine), trainium.md §2.2-2.3.
# ---------------------------------------------------------------------------------------------

def _tiles(ev: TraceEvent) -> list[Access]:
    """On-chip tensor operands read by an instruction (scalars and HBM sides excluded)."""
    return [a for a in ev.reads if a.buffer is not Buffer.HBM]


def _n(ev: TraceEvent) -> int:
    return max(1, int(ev.free_size))


def _pe_dtype_factor(dtype: str, spec: HardwareSpec, *, onezero: bool = False) -> float:
    d = _norm_dtype(dtype)
    if d in _FP32:
        # fp32 passes take 4x; a 0/1-only operand makes fp32 up to 2x faster (S9 nc_matmul).
        return spec.pe_fp32_factor / (spec.pe_onezero_fp32_speedup if onezero else 1.0)
    if d in _FP8:
        return spec.pe_fp8_factor
    return 1.0


def matmul_shape(ev: TraceEvent) -> tuple[int, int, int]:
    """(K, M, N) of a matmul event: contraction, stationary free, moving free."""
    a = ev.attrs
    tiles = [t for t in _tiles(ev) if t.buffer is Buffer.SBUF]
    n_stat = a.get("stationary_free") or (tiles[0].free_elems if tiles else ev.partitions)
    n_mov = a.get("moving_free") or (tiles[1].free_elems if len(tiles) > 1 else ev.free_size)
    k = a.get("contraction") or ev.partitions or (tiles[0].partitions if tiles else 1)
    return int(k), int(n_stat), int(n_mov)


def _pe_transpose_cycles(p: int, f: int, dtype: str, spec: HardwareSpec) -> float:
    # nc_transpose on PE: max(P, min(64, F)) back-to-back (S9); fp32 is an identity matmul pass.
    factor = spec.pe_transpose_fp32_factor if _norm_dtype(dtype) in _FP32 else 1.0
    return max(p, min(spec.pe_min_stationary_cycles, f)) * factor


def _cost_matmul(ev: TraceEvent, spec: HardwareSpec) -> float:
    _, n_stat, n_mov = matmul_shape(ev)
    onezero = bool(ev.attrs.get("is_stationary_onezero") or ev.attrs.get("is_moving_onezero"))
    factor = _pe_dtype_factor(ev.dtype, spec, onezero=onezero)
    mm = max(min(spec.pe_min_stationary_cycles, n_stat), n_mov) * factor
    # Background LoadStationary overlaps the MM; PE throughput is the slower of the two (S1, S6).
    ls = n_stat / spec.pe_load_stationary_speedup * factor
    cycles = max(mm, ls)
    if ev.op == "matmul" and ev.attrs.get("transpose_x") is False:
        # nl.matmul(x, y) without transpose_x inserts nc_transpose(x) on PE first (S10).
        k, m, _ = matmul_shape(ev)
        cycles += _pe_transpose_cycles(m, k, ev.dtype, spec)
    return cycles


def _cost_transpose(ev: TraceEvent, spec: HardwareSpec) -> float:
    if ev.engine is Engine.TENSOR:
        return _pe_transpose_cycles(ev.partitions, _n(ev), ev.dtype, spec)
    return max(spec.min_ii_cycles, _n(ev))  # DVE 32x32 transpose


def _cost_broadcast(ev: TraceEvent, spec: HardwareSpec) -> float:
    # Partition broadcast is a TensorE matmul with a ones vector as stationary (S1, S10): M = P out.
    if ev.engine is not Engine.TENSOR:
        return _cost_vector_default(ev, spec)
    return max(min(spec.pe_min_stationary_cycles, ev.partitions), _n(ev)) * _pe_dtype_factor(
        ev.dtype, spec, onezero=True)


def _all_16bit(ev: TraceEvent, accesses: Sequence[Access]) -> bool:
    return all(_norm_dtype(a.dtype) in _SIXTEEN_BIT for a in accesses)


def _perf_mode_divisor(ev: TraceEvent, spec: HardwareSpec, *, copy_like: bool) -> float:
    """Trn2 VectorE performance mode (S2, trainium.md §2.3.8); 1 on Trn1."""
    if not spec.vector_perf_mode or ev.engine is not Engine.VECTOR:
        return 1.0
    tiles = _tiles(ev)
    outs = [w for w in ev.writes if w.buffer is not Buffer.HBM]
    if not tiles or not outs or not _all_16bit(ev, tiles + outs):
        return 1.0
    all_sbuf = all(a.buffer is Buffer.SBUF for a in tiles + outs)
    contiguous = all(a.inner_stride_bytes <= itemsize(a.dtype) for a in tiles + outs)
    if copy_like:
        return 4.0 if (all_sbuf and contiguous) else 2.0
    return 2.0 if all_sbuf else 1.0


def _cost_tensor_tensor(ev: TraceEvent, spec: HardwareSpec) -> float:
    n = _n(ev)
    tiles = _tiles(ev)
    buffers = {a.buffer for a in tiles}
    op = str(ev.attrs.get("op", "")).lower()
    # One input in PSUM and one in SBUF streams in N cycles; so do all-bf16 add/sub/mul from SBUF with
    # stride-1 data; otherwise 2N (S9 tensor_tensor).
    fast = buffers == {Buffer.PSUM, Buffer.SBUF} or (
        buffers == {Buffer.SBUF} and _all_16bit(ev, tiles + list(ev.writes))
        and op in {"add", "subtract", "multiply", "sub", "mul"}
        and all(a.inner_stride_bytes <= itemsize(a.dtype) for a in tiles))
    cycles = max(spec.min_ii_cycles, n if fast else 2 * n)
    return cycles / _perf_mode_divisor(ev, spec, copy_like=False)


def _cost_elementwise(ev: TraceEvent, spec: HardwareSpec) -> float:
    """tensor_scalar / tensor_copy / activation family: max(MIN_II, N)."""
    copy_like = ev.op in {"tensor_scalar", "tensor_copy", "copy"}
    return max(spec.min_ii_cycles, _n(ev)) / _perf_mode_divisor(ev, spec, copy_like=copy_like)


def _cost_activation_reduce(ev: TraceEvent, spec: HardwareSpec) -> float:
    return max(spec.min_ii_cycles, _n(ev)) + spec.act_read_accumulator_cycles


def _cost_activation(ev: TraceEvent, spec: HardwareSpec) -> float:
    if ev.attrs.get("reduce") or ev.attrs.get("reduce_res"):
        return _cost_activation_reduce(ev, spec)
    return max(spec.min_ii_cycles, _n(ev))


def _cost_scalar_tensor_tensor(ev: TraceEvent, spec: HardwareSpec) -> float:
    n = _n(ev)
    tiles = _tiles(ev)
    fast = (_all_16bit(ev, tiles) and n % 2 == 0
            and str(ev.attrs.get("op0", "")).lower() in {"subtract", "sub"}
            and str(ev.attrs.get("op1", "")).lower() in {"multiply", "mul"})
    return max(spec.min_ii_cycles, n if fast else 2 * n)


def _cost_tensor_reduce(ev: TraceEvent, spec: HardwareSpec) -> float:
    n = _n(ev)
    tiles = _tiles(ev)
    op = str(ev.attrs.get("op", "")).lower()
    fast = op in {"add", "max", "sum"} and _all_16bit(ev, tiles + [w for w in ev.writes])
    return max(spec.min_ii_cycles, n / 2 if fast else n)


def _cost_min_ii_plus_min_ii(ev: TraceEvent, spec: HardwareSpec) -> float:
    return max(spec.min_ii_cycles, _n(ev)) + spec.min_ii_cycles


def _cost_two_pass(ev: TraceEvent, spec: HardwareSpec) -> float:
    return max(spec.min_ii_cycles, 2 * _n(ev))


def _cost_copy_predicated(ev: TraceEvent, spec: HardwareSpec) -> float:
    buffers = [a.buffer for a in _tiles(ev)]
    same = len(buffers) >= 2 and len(set(buffers)) == 1
    return max(spec.min_ii_cycles, 2 * _n(ev) if same else _n(ev))


def _cost_reciprocal(ev: TraceEvent, spec: HardwareSpec) -> float:
    if ev.engine is Engine.SCALAR:  # activation(op=reciprocal): N, less precise (S11)
        return max(spec.min_ii_cycles, _n(ev))
    return max(spec.min_ii_cycles, 8 * _n(ev))


def _cost_memset(ev: TraceEvent, spec: HardwareSpec) -> float:
    n = _n(ev)
    zero16 = ev.attrs.get("value", None) in (0, 0.0) and _norm_dtype(ev.dtype) in _SIXTEEN_BIT
    return max(spec.min_ii_cycles, n / 2 if zero16 else n)


def _cost_gpsimd_start(ev: TraceEvent, spec: HardwareSpec) -> float:
    return spec.gpsimd_start_cycles + _n(ev)


def _cost_dynamic_copy(ev: TraceEvent, spec: HardwareSpec) -> float:
    return max(spec.min_ii_dynamic_cycles, _n(ev))


def _cost_bn_aggr(ev: TraceEvent, spec: HardwareSpec) -> float:
    return max(spec.min_ii_cycles, 13 * (_n(ev) / 3))


def _cost_gpsimd_default(ev: TraceEvent, spec: HardwareSpec) -> float:
    # No documented GpSimd rule (S1). Derived from the hardware: each core's 512-bit SIMD serves 16
    # partitions, so one partition gets 512 / (16 * 8 * itemsize) elements per cycle, plus start-up.
    size = itemsize(ev.dtype) if _norm_dtype(ev.dtype) in _ITEMSIZE else 4
    per_cycle = spec.gpsimd_bits_per_cycle / (spec.gpsimd_partitions_per_core * 8 * size)
    inputs = max(1, len(_tiles(ev)))
    return spec.gpsimd_start_cycles + inputs * _n(ev) / per_cycle


def _cost_gpsimd_rsqrt(ev: TraceEvent, spec: HardwareSpec) -> float:
    return 4 * max(spec.min_ii_cycles, _n(ev))  # ~4x slower than ACT rsqrt (S11)


def _cost_vector_default(ev: TraceEvent, spec: HardwareSpec) -> float:
    # VectorE: one input ~N cycles, two inputs ~2N (S1, trainium.md §2.3.4).
    inputs = len(_tiles(ev))
    if inputs >= 2:
        return _cost_tensor_tensor(ev, spec)
    return _cost_elementwise(ev, spec)


def _cost_scalar_default(ev: TraceEvent, spec: HardwareSpec) -> float:
    return max(spec.min_ii_cycles, _n(ev))  # ScalarE streams one input at N cycles (S1)


def _cost_tensor_default(ev: TraceEvent, spec: HardwareSpec) -> float:
    return _cost_matmul(ev, spec)


CostRule = Callable[[TraceEvent, HardwareSpec], float]

# Canonical NKI instruction -> cost rule. `nl.*` names map onto these through `_ALIASES`.
COST_RULES: dict[str, CostRule] = {
    "nc_matmul": _cost_matmul,
    "matmul": _cost_matmul,
    "nc_transpose": _cost_transpose,
    "transpose": _cost_transpose,
    "broadcast_to": _cost_broadcast,
    "activation": _cost_activation,
    "activation_reduce": _cost_activation_reduce,
    "tensor_tensor": _cost_tensor_tensor,
    "tensor_scalar": _cost_elementwise,
    "tensor_copy": _cost_elementwise,
    "scalar_tensor_tensor": _cost_scalar_tensor_tensor,
    "tensor_tensor_scan": _cost_two_pass,
    "tensor_reduce": _cost_tensor_reduce,
    "tensor_scalar_reduce": _cost_min_ii_plus_min_ii,
    "tensor_copy_predicated": _cost_copy_predicated,
    "tensor_copy_dynamic_src": _cost_dynamic_copy,
    "tensor_copy_dynamic_dst": _cost_dynamic_copy,
    "reciprocal": _cost_reciprocal,
    "memset": _cost_memset,
    "iota": _cost_gpsimd_start,
    "affine_select": _cost_gpsimd_start,
    "bn_stats": _cost_elementwise,
    "bn_aggr": _cost_bn_aggr,
    "tensor_partition_reduce": _cost_gpsimd_default,
}

_ALIASES = {
    "copy": "tensor_copy",
    "sum": "tensor_reduce", "prod": "tensor_reduce", "mean": "tensor_reduce", "all": "tensor_reduce",
    "var": "tensor_reduce", "max": "tensor_reduce", "min": "tensor_reduce",
    "loop_reduce": "tensor_tensor",
    "where": "tensor_tensor",
}

ENGINE_DEFAULTS: dict[Engine, CostRule] = {
    Engine.TENSOR: _cost_tensor_default,
    Engine.VECTOR: _cost_vector_default,
    Engine.SCALAR: _cost_scalar_default,
    Engine.GPSIMD: _cost_gpsimd_default,
}


def _rule_for(ev: TraceEvent) -> CostRule:
    op = _ALIASES.get(ev.op, ev.op)
    if ev.engine is Engine.GPSIMD and op == "rsqrt":
        return _cost_gpsimd_rsqrt
    if ev.engine is Engine.SCALAR and op not in ("reciprocal", "activation_reduce", "tensor_copy"):
        # Every ACT instruction is func(in*scale+bias) at N cycles: nl.exp, tensor_scalar on ACT, ...
        return COST_RULES.get(op, _cost_activation) if op.startswith("activation") else _cost_activation
    rule = COST_RULES.get(op)
    if rule is None or (ev.engine is Engine.VECTOR and op in ("nc_matmul", "matmul")):
        return ENGINE_DEFAULTS[ev.engine]
    return rule


# Instructions both VectorE and ScalarE execute (S9: tensor_scalar on DVE or ACT, tensor_copy on any
# engine, reciprocal as DVE `reciprocal` or ACT `activation(reciprocal)`), with the ALU ops ACT has.
FLEXIBLE_OPS = frozenset({"tensor_scalar", "tensor_copy", "reciprocal"})
_ACT_ALU_OPS = frozenset({None, "add", "subtract", "multiply"})


def engine_choices(ev: TraceEvent) -> list[TraceEvent]:
    """Where an instruction may run: as recorded, or also on the other of DVE/ACT when the kernel did
    not pin an engine (`attrs["engine_explicit"]`) and both engines implement it."""
    if (ev.op not in FLEXIBLE_OPS or ev.engine not in (Engine.VECTOR, Engine.SCALAR)
            or ev.attrs.get("engine_explicit")):
        return [ev]
    if ev.op == "tensor_scalar" and not {ev.attrs.get("op0"), ev.attrs.get("op1")} <= _ACT_ALU_OPS:
        return [ev]  # bitvec / compare ops run on DVE only (S9 tensor_scalar)
    other = Engine.SCALAR if ev.engine is Engine.VECTOR else Engine.VECTOR
    return [ev, replace(ev, engine=other)]


@dataclass(frozen=True, slots=True)
class InstrCost:
    """Engine occupancy (initiation interval) and the extra latency until results are visible."""

    track: str
    busy_s: float
    latency_s: float


def instruction_cost(ev: TraceEvent, spec: HardwareSpec) -> InstrCost:
    """Cost of one compute instruction (not DMA) on `spec`."""
    engine = ev.engine
    if engine is Engine.DMA or engine is Engine.NONE:
        raise ValueError(f"instruction_cost: {ev.op!r} on {engine.value} is not a compute "
                         "instruction; DMA transfers are timed by dma_cost")
    track = engine._value_  # plain attribute: Enum.value is a slow descriptor in CPython
    clock = spec.clock_hz(track)
    accesses, penalty = 0, 1.0
    hbm, psum, threshold = Buffer.HBM, Buffer.PSUM, spec.strided_access_threshold_bytes
    pe = engine is Engine.TENSOR
    for a in ev.reads:
        if a.buffer is hbm or (pe and a.buffer is psum):  # PE accumulate is near-memory (S1)
            continue
        accesses += 1
        if a.inner_stride_bytes > threshold:
            penalty = spec.strided_access_penalty
    for a in ev.writes:
        if a.buffer is hbm:
            continue
        accesses += 1
        if a.inner_stride_bytes > threshold:
            penalty = spec.strided_access_penalty
    # Innermost stride over 16 B halves the SBUF/PSUM port bandwidth (S1, v2).
    cycles = _rule_for(ev)(ev, spec) * penalty
    # ~60 cycles per SBUF/PSUM access request (S1), partly hidden by instruction-level parallelism:
    # the exposed share occupies the engine, the rest and the ~100-cycle static overhead are latency
    # that only a dependent instruction waits for (S1, S6). A dependent chain pays all of it.
    access = spec.access_overhead_cycles * accesses
    exposed = access * spec.access_overhead_exposed_fraction
    latency = spec.static_overhead_cycles + access - exposed
    return InstrCost(track, (cycles + exposed) / clock, latency / clock)


# ---------------------------------------------------------------------------------------------
# DMA (trainium.md §2.4)
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class DmaCost:
    """A transfer's data-phase times on the busiest DMA engine and on HBM, and its engine count."""

    kind: str  # load | store | sbuf_copy | hbm_copy | spill_save | spill_reload
    nbytes: int
    engines: int
    engine_s: float
    hbm_s: float
    descriptors: int


_TRANSPOSING_DMA = {"load_transpose2d", "dma_transpose"}


def dma_kind(ev: TraceEvent) -> str:
    src = ev.reads[0].buffer if ev.reads else Buffer.HBM
    dst = ev.writes[0].buffer if ev.writes else Buffer.HBM
    if src is Buffer.HBM and dst is Buffer.HBM:
        return "hbm_copy"
    if src is Buffer.HBM:
        return "load"
    if dst is Buffer.HBM:
        return "store"
    return "sbuf_copy"


def dma_transfer_cost(*, nbytes: int, partitions: int, chunk_bytes: int, touches_hbm: bool,
                      spec: HardwareSpec, kind: str, efficiency: float = 1.0) -> DmaCost:
    """Time one transfer: split over ceil(P/8) engines, fragments under 512 B padded, HBM-capped."""
    nbytes = max(0, int(nbytes))
    parts = max(1, min(int(partitions), spec.partitions))
    engines = min(spec.dma_engines, math.ceil(parts / spec.dma_partitions_per_engine))
    chunk = max(1, min(int(chunk_bytes), nbytes) if nbytes else 1)
    descriptors = math.ceil(nbytes / chunk) if nbytes else 0
    # Every descriptor (contiguous fragment) costs at least dma_min_descriptor_bytes of engine time.
    effective = max(nbytes, descriptors * spec.dma_min_descriptor_bytes)
    engine_s = effective / engines / spec.dma_engine_bytes_per_s / max(efficiency, 1e-9)
    hbm_s = nbytes / spec.hbm_bytes_per_s if touches_hbm else 0.0
    return DmaCost(kind, nbytes, engines, engine_s, hbm_s, descriptors)


def _contiguous_run(a: Access) -> int:
    """Longest contiguous byte run of an access.

    When the recorded run is a single element but the access fills its bounding box densely (an
    `nl.arange` tile index is recorded as a gather), the innermost box extent is contiguous.
    """
    run = a.contiguous_bytes or a.nbytes
    elems = a.partitions * a.free_elems
    size = a.nbytes // elems if elems else 0
    if size and run <= size and a.region:
        box = math.prod(hi - lo for lo, hi in a.region)
        if box == elems:
            run = max(run, (a.region[-1][1] - a.region[-1][0]) * size)
    return run


def dma_cost(ev: TraceEvent, spec: HardwareSpec) -> DmaCost:
    """Cost of a DMA event from its HBM and SBUF sides (contiguous run = descriptor size)."""
    if not ev.reads and not ev.writes:
        raise ValueError(f"dma_cost: DMA event {ev.op!r} (line {ev.line}) has no reads or writes")
    accesses = list(ev.reads) + list(ev.writes)
    nbytes = (ev.writes[0].nbytes if ev.writes else ev.reads[0].nbytes)
    onchip = [a for a in accesses if a.buffer is not Buffer.HBM]
    partitions = onchip[0].partitions if onchip else (ev.partitions or spec.partitions)
    chunk = nbytes
    for a in accesses:
        run = _contiguous_run(a)
        if a.buffer is not Buffer.HBM:
            # Every SBUF partition row is at least one buffer of the scatter-gather list (S7).
            run = min(run, max(1, a.nbytes // max(1, a.partitions)))
        chunk = min(chunk, run)
    efficiency = 1.0
    if ev.op in _TRANSPOSING_DMA or ev.attrs.get("transpose"):
        if spec.dma_transpose_efficiency > 0:
            efficiency = spec.dma_transpose_efficiency  # Trn2 DMA transpose (S2)
        else:
            chunk = itemsize(ev.dtype) if _norm_dtype(ev.dtype) in _ITEMSIZE else 4  # element-wise (S6)
    touches_hbm = any(a.buffer is Buffer.HBM for a in accesses)
    return dma_transfer_cost(nbytes=nbytes, partitions=partitions, chunk_bytes=chunk,
                             touches_hbm=touches_hbm, spec=spec, kind=dma_kind(ev),
                             efficiency=efficiency)


# ---------------------------------------------------------------------------------------------
# SBUF capacity: Belady spill plan
# ---------------------------------------------------------------------------------------------

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
            if d == 0 or any(h - l != 1 for l, h in region[:d]):
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
    for ev in trace:
        touched: dict[tuple, int] = {}
        for flag, accesses in ((1, ev.reads), (2, ev.writes)):
            for a in accesses:
                if a.buffer is not sbuf:
                    continue
                unit = liveness_unit(a)
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
        for unit, flags in touched.items():
            if flags & 2:
                dirty.add(unit)
        if used > plan.peak_bytes_per_partition:
            plan.peak_bytes_per_partition = used
        for unit in touched:
            if cursor[unit] >= len(uses[unit]) and unit in resident:
                used -= resident.pop(unit)
                dirty.discard(unit)
    return plan


# ---------------------------------------------------------------------------------------------
# Scheduling
# ---------------------------------------------------------------------------------------------

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


class _RegionMap:
    """region -> value, with a grid index on the two leading dims so tile lookups stay O(tiles hit).

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
        found = set(self.whole)
        cells = self.cells
        for k in keys:
            c = cells.get(k)
            if c:
                found.update(c)
        return [r for r in found if _intersects(region, r)]

    def remove_covered(self, region: tuple) -> None:
        for r in self.overlapping(region):
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


class _TensorState:
    __slots__ = ("writes", "reads")

    def __init__(self) -> None:
        self.writes = _RegionMap()  # region -> (end, issue_end, track)
        self.reads = _RegionMap()  # region -> end; only scanned when the tensor is written again


class _PsumBanks:
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
        for a in ev.reads + ev.writes:
            if a.buffer is Buffer.PSUM and end > self.end.get(a.tensor_id, 0.0):
                self.end[a.tensor_id] = end


class _Scheduler:
    def __init__(self, spec: HardwareSpec) -> None:
        self.spec = spec
        self.engines = {t: Timeline() for t in COMPUTE_TRACKS}
        self.ports = {"sbuf_vector_gpsimd": Timeline(), "psum_vector_scalar": Timeline()}
        self.queue_free = [0.0] * spec.dma_queues
        self.rings = [Timeline()]
        self.rings_uniform = True
        self.hbm = Timeline()
        self.tensors: dict[int, _TensorState] = {}
        self.seq: dict[int, list] = {}  # loop_id -> [iteration, max_end of it, barrier]
        self.slices: list[Slice] = []
        self.busy = dict.fromkeys(COMPUTE_TRACKS, 0.0)
        self.count = dict.fromkeys(COMPUTE_TRACKS, 0)
        self.dma = DmaStats(engines=spec.dma_engines)
        self.last_write_end: dict[int, float] = {}  # tensor -> end of its latest write (spills)
        self.saved_end: dict[int, float] = {}
        self.psum = _PsumBanks(spec)
        self.last_access: dict[int, int] = {}
        self.last_write: dict[int, int] = {}

    # -- dependencies ------------------------------------------------------------------------
    def _state(self, tid: int) -> _TensorState:
        st = self.tensors.get(tid)
        if st is None:
            st = self.tensors[tid] = _TensorState()
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
        for a in ev_writes:
            if self.last_write_end.get(a.tensor_id, 0.0) < end:
                self.last_write_end[a.tensor_id] = end
            if last_access.get(a.tensor_id, -1) <= index:
                continue  # never touched again
            st = self._state(a.tensor_id)
            region = a.region
            if st.writes:
                st.writes.remove_covered(region)
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
        placements = engine_choices(ev)
        if len(placements) > 1:
            # The compiler places engine-agnostic work (observed, trainium.md §5.4.6): take the engine
            # that finishes the instruction first.
            options = []
            for p in placements:
                c = instruction_cost(p, self.spec)
                start = self._slot(p, ready, c.busy_s)
                options.append((start + c.busy_s, len(options), p, c, start))
            _, _, ev, cost, start = min(options)
        else:
            cost = instruction_cost(ev, self.spec)
            start = self._slot(ev, ready, cost.busy_s)
        track = cost.track
        self.engines[track].reserve(start, cost.busy_s)
        for p in self._ports(ev, track):
            p.reserve(start, cost.busy_s)
        issue_end = start + cost.busy_s
        end = issue_end + cost.latency_s
        self.busy[track] += cost.busy_s
        self.count[track] += 1
        self.slices.append(Slice(track, ev.op, start, end, cost.busy_s, index, ev.line, 0, "compute"))
        return track, end, issue_end

    def _slot(self, ev: TraceEvent, ready: float, busy: float) -> float:
        """Earliest start at or after `ready` where the engine (and, on trn1, its shared SBUF/PSUM
        port, S1) is idle for `busy`. Like the compiler's static schedule, a later instruction may
        fill an idle gap its engine left while waiting for an earlier one's operands."""
        track = ev.engine._value_
        resources = [self.engines[track]] + self._ports(ev, track)
        start = ready
        for _ in range(16):
            t = start
            for r in resources:
                t = r.earliest(t, busy)[0]
            if t == start:
                break
            start = t
        return start

    def _ports(self, ev: TraceEvent, track: str) -> list[Timeline]:
        spec = self.spec
        ports = []
        if track == "tensor":
            return ports
        accesses = ev.reads + ev.writes
        # Enum hashing is slow in CPython; identity checks keep this on the fast path.
        if spec.sbuf_vector_gpsimd_exclusive and track != "scalar" and any(
                a.buffer is Buffer.SBUF for a in accesses):
            ports.append(self.ports["sbuf_vector_gpsimd"])
        if spec.psum_vector_scalar_exclusive and track != "gpsimd" and any(
                a.buffer is Buffer.PSUM for a in accesses):
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
        track = f"dma_q{q}"
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
    plan = spill_plan(trace, spec)
    sch = _Scheduler(spec)
    sch.plan(trace)
    makespan = 0.0
    for i, ev in enumerate(trace):
        if ev.engine is Engine.NONE:
            continue
        track = ev.engine._value_
        ready = sch.seq_barrier(ev)
        if ev.engine is not Engine.DMA:
            ready = max(ready, sch.psum.ready(ev, i))
        if i in plan.saves:  # space for this instruction's operands is free once the save is done
            ready = max(ready, sch.run_spill(plan.saves[i], 0.0, save=True, index=i, line=ev.line))
        if i in plan.reloads:
            ready = max(ready, sch.run_spill(plan.reloads[i], 0.0, save=False, index=i, line=ev.line))
        for a in ev.reads:
            t = sch.read_ready(a, track)
            if t > ready:
                ready = t
        for a in ev.writes:
            t = sch.write_ready(a, track)
            if t > ready:
                ready = t
        if ev.engine is Engine.DMA:
            end = sch.run_dma(dma_cost(ev, spec), ready, name=ev.op, index=i, line=ev.line)
            issue_end = end
        else:
            track, end, issue_end = sch.run_compute(ev, i, ready)
        sch.record(i, ev.reads, ev.writes, end, issue_end, track)
        sch.seq_done(ev, end)
        sch.psum.done(ev, end)
        if end > makespan:
            makespan = end
    for s in sch.slices:  # spill saves may finish after the last instruction
        makespan = max(makespan, s.end_s)
    active = {t: _union_length([(s.start_s, s.end_s) for s in sch.slices if s.track == t])
              for t in COMPUTE_TRACKS}
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


__all__ = [
    "COST_MODEL_VERSION", "COST_RULES", "DmaCost", "DmaStats", "InstrCost", "LatencyBreakdown",
    "Slice", "SpillPlan", "Timeline", "dma_cost", "dma_transfer_cost", "estimate_latency",
    "instruction_cost", "itemsize", "matmul_shape", "spill_plan",
]
