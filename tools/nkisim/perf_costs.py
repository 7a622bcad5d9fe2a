"""Per-instruction costs of the NeuronCore engines (trainium.md §2.2-2.3): a table of NKI ops.

`instruction_cost(event, spec)` gives a compute instruction's engine occupancy (initiation interval) and
the extra latency a dependent instruction waits for. Every rule cites the documented formula it uses.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from accelopt_graph.tools.nkisim.hardware import HardwareSpec
from accelopt_graph.tools.nkisim.trace import Access, Buffer, Engine, TraceEvent

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


def itemsize_or(dtype: str, default: int) -> int:
    """Bytes per element, or `default` for a dtype name the table does not know."""
    return _ITEMSIZE.get(norm_dtype(dtype), default)


def itemsize(dtype: str) -> int:
    """Bytes per element of an NKI dtype name (numpy names accepted)."""
    name = norm_dtype(dtype)
    if name not in _ITEMSIZE:
        raise ValueError(f"perf_costs.itemsize: unknown dtype {dtype!r}; known: {sorted(_ITEMSIZE)}")
    return _ITEMSIZE[name]


def norm_dtype(dtype: str) -> str:
    """`nl.bfloat16`, `numpy.float32`, `float32` -> the bare lower-case dtype name."""
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
    d = norm_dtype(dtype)
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
    factor = spec.pe_transpose_fp32_factor if norm_dtype(dtype) in _FP32 else 1.0
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
    return all(norm_dtype(a.dtype) in _SIXTEEN_BIT for a in accesses)


def _perf_mode_divisor(ev: TraceEvent, spec: HardwareSpec, *, copy_like: bool) -> float:
    """Trn2 VectorE performance mode (S2, trainium.md §2.3.8); 1 on Trn1."""
    if not spec.vector_perf_mode or ev.engine is not Engine.VECTOR:
        return 1.0
    tiles = _tiles(ev)
    outs = [w for w in ev.writes if w.buffer is not Buffer.HBM]
    if not tiles or not outs or not _all_16bit(ev, tiles + outs):
        return 1.0
    all_sbuf = all(a.buffer is Buffer.SBUF for a in tiles + outs)
    contiguous = all(a.inner_stride_bytes <= itemsize_or(a.dtype, 4) for a in tiles + outs)
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
        and all(a.inner_stride_bytes <= itemsize_or(a.dtype, 4) for a in tiles))
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
    fast = op in {"add", "max", "maximum", "sum"} and _all_16bit(ev, tiles + list(ev.writes))
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
    zero16 = ev.attrs.get("value", None) in (0, 0.0) and norm_dtype(ev.dtype) in _SIXTEEN_BIT
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
    size = itemsize_or(ev.dtype, 4)
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


def engine_options(ev: TraceEvent) -> tuple[Engine, ...]:
    """The engines an instruction may run on, its recorded one first (see `engine_choices`)."""
    if (ev.op not in FLEXIBLE_OPS or ev.engine not in (Engine.VECTOR, Engine.SCALAR)
            or ev.attrs.get("engine_explicit")):
        return (ev.engine,)
    if ev.op == "tensor_scalar" and not {ev.attrs.get("op0"), ev.attrs.get("op1")} <= _ACT_ALU_OPS:
        return (ev.engine,)  # bitvec / compare ops run on DVE only (S9 tensor_scalar)
    return (ev.engine, Engine.SCALAR if ev.engine is Engine.VECTOR else Engine.VECTOR)


def engine_choices(ev: TraceEvent) -> list[TraceEvent]:
    """Where an instruction may run: as recorded, or also on the other of DVE/ACT when the kernel did
    not pin an engine (`attrs["engine_explicit"]`) and both engines implement it."""
    engines = engine_options(ev)
    return [ev] + [replace(ev, engine=e) for e in engines[1:]]


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


__all__ = [
    "COMPUTE_TRACKS", "COST_RULES", "ENGINE_DEFAULTS", "FLEXIBLE_OPS", "InstrCost", "engine_choices",
    "engine_options",
    "instruction_cost", "itemsize", "itemsize_or", "matmul_shape", "norm_dtype",
]
