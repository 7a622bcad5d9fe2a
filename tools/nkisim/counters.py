"""neuron-profile summary counters computed from a trace and its schedule (trainium.md §5).

Field names, units and conventions follow the profiler's summary-json as AccelOpt feeds it to the
planner: "percent" fields are fractions in [0, 1]; compute-engine SBUF/PSUM bytes are per-partition
bytes while DMA bytes are full bytes; fp32 matmul flops count twice; zero flop and PSUM counters are
left out, spill counters and derived ratios are present as 0 (§5.4).
"""
from __future__ import annotations

from collections.abc import Sequence

from accelopt_graph.tools.nkisim.hardware import HardwareSpec
from accelopt_graph.tools.nkisim.perf_costs import matmul_shape
from accelopt_graph.tools.nkisim.perf_model import LatencyBreakdown
from accelopt_graph.tools.nkisim.trace import Buffer, Engine, TraceEvent

# The counters AccelOpt's planner reads, in its order (algorithm.md, trainium.md §5.2).
PLANNER_COUNTERS = (
    "hbm_read_bytes", "hbm_write_bytes", "psum_read_bytes", "psum_write_bytes", "sbuf_read_bytes",
    "sbuf_write_bytes", "spill_reload_bytes", "spill_save_bytes", "hardware_flops", "transpose_flops",
    "peak_flops_bandwidth_ratio", "mm_arithmetic_intensity", "hfu_estimated_percent",
    "scalar_engine_active_time_percent", "vector_engine_active_time_percent",
    "gpsimd_engine_active_time_percent",
)
# Absent from the real summary when zero (§5.4 item 5).
OMIT_WHEN_ZERO = frozenset({"hardware_flops", "transpose_flops", "psum_read_bytes", "psum_write_bytes"})

_PE_MATMUL_OPS = frozenset({"nc_matmul", "matmul"})
_PE_TRANSPOSE_OPS = frozenset({"nc_transpose", "transpose"})


def _per_partition_bytes(a) -> int:
    return a.free_elems * (a.nbytes // max(1, a.partitions * a.free_elems) or 1)


def pe_flops(ev: TraceEvent, spec: HardwareSpec) -> tuple[float, float]:
    """(hardware_flops, transpose_flops) of one event: 2*K*M*N per PE pass, fp32 counted twice."""
    if ev.engine is not Engine.TENSOR:
        return 0.0, 0.0
    fp32 = str(ev.dtype).lower() in ("float32", "fp32")
    scale = spec.pe_fp32_flop_count_factor if fp32 else 1.0
    if ev.op in _PE_TRANSPOSE_OPS:
        # A PE transpose is a matmul against a PxP identity: K = P, M = F, N = P (§5.4 item 3).
        p, f = ev.partitions, max(1, ev.free_size)
        flops = 2.0 * p * f * p * scale
        return flops, flops
    if ev.op == "broadcast_to":
        flops = 2.0 * 1 * ev.partitions * max(1, ev.free_size) * scale
        return flops, 0.0
    k, m, n = matmul_shape(ev)
    flops = 2.0 * k * m * n * scale
    extra_t = 0.0
    if ev.op == "matmul" and ev.attrs.get("transpose_x") is False:
        extra_t = 2.0 * m * k * m * scale  # the transpose nl.matmul inserts for x [M, K]
    if ev.attrs.get("is_transpose"):
        return flops + extra_t, flops + extra_t
    return flops + extra_t, extra_t


def compute_counters(trace: Sequence[TraceEvent], breakdown: LatencyBreakdown,
                     spec: HardwareSpec) -> dict[str, float]:
    """The summary counters of one simulated run, with neuron-profile's field names."""
    c = dict.fromkeys(("hbm_read_bytes", "hbm_write_bytes", "sbuf_read_bytes", "sbuf_write_bytes",
                       "psum_read_bytes", "psum_write_bytes", "hardware_flops", "transpose_flops"), 0.0)
    matmuls = 0
    evictions = eviction_bytes = 0.0
    for ev in trace:
        if ev.engine is Engine.NONE:
            continue
        if ev.engine is Engine.DMA:
            # Identity checks: hashing an Enum is slow in CPython.
            for a in ev.reads:
                if a.buffer is Buffer.HBM:
                    c["hbm_read_bytes"] += a.nbytes
                elif a.buffer is Buffer.SBUF:
                    c["sbuf_read_bytes"] += a.nbytes
            for a in ev.writes:
                if a.buffer is Buffer.HBM:
                    c["hbm_write_bytes"] += a.nbytes
                elif a.buffer is Buffer.SBUF:
                    c["sbuf_write_bytes"] += a.nbytes
            continue
        fp32_pe = ev.engine is Engine.TENSOR and str(ev.dtype).lower() in ("float32", "fp32")
        psum_in = False
        for a in ev.reads:
            if a.buffer is Buffer.SBUF:
                c["sbuf_read_bytes"] += _per_partition_bytes(a)
            elif a.buffer is Buffer.PSUM and ev.engine is not Engine.TENSOR:
                c["psum_read_bytes"] += _per_partition_bytes(a)
                psum_in = True
        for a in ev.writes:
            if a.buffer is Buffer.SBUF:
                c["sbuf_write_bytes"] += _per_partition_bytes(a)
                if psum_in:
                    evictions += 1
                    eviction_bytes += _per_partition_bytes(a)
            elif a.buffer is Buffer.PSUM:
                # fp32 matmuls write PSUM once per pass pair (observed §5.4 item 4: 2 fp32 passes).
                passes = spec.pe_fp32_flop_count_factor if fp32_pe else 1.0
                c["psum_write_bytes"] += _per_partition_bytes(a) * passes
        hw, tr = pe_flops(ev, spec)
        c["hardware_flops"] += hw
        c["transpose_flops"] += tr
        matmuls += ev.engine is Engine.TENSOR and ev.op in _PE_MATMUL_OPS
    spill = breakdown.spill
    c["hbm_read_bytes"] += spill.reload_bytes
    c["hbm_write_bytes"] += spill.save_bytes
    c["sbuf_read_bytes"] += spill.save_bytes
    c["sbuf_write_bytes"] += spill.reload_bytes
    c["spill_save_bytes"] = float(spill.save_bytes)
    c["spill_reload_bytes"] = float(spill.reload_bytes)
    total = breakdown.total_s
    hbm = c["hbm_read_bytes"] + c["hbm_write_bytes"]
    c["peak_flops_bandwidth_ratio"] = spec.pe_peak_flops_per_s / spec.profiler_hbm_bytes_per_s
    c["mm_arithmetic_intensity"] = (c["hardware_flops"] - c["transpose_flops"]) / hbm if hbm else 0.0
    c["hfu_estimated_percent"] = c["hardware_flops"] / (spec.pe_peak_flops_per_s * total) if total else 0.0
    c["mfu_inst_estimated_percent"] = ((c["hardware_flops"] - c["transpose_flops"])
                                       / (spec.pe_peak_flops_per_s * total)) if total else 0.0
    c["mbu_estimated_percent"] = hbm / total / spec.hbm_bytes_per_s if total else 0.0
    for engine in ("tensor", "vector", "scalar", "gpsimd"):
        active = breakdown.engine_active_s.get(engine, 0.0)
        c[f"{engine}_engine_active_time_percent"] = min(1.0, active / total) if total else 0.0
        # Counted where the schedule ran them (engine-agnostic ops may have moved, perf_model).
        c[f"{engine}_engine_instruction_count"] = float(breakdown.engine_instructions.get(engine, 0))
        c[f"{engine}_active_time"] = active
        c[f"{engine}_instruction_time"] = breakdown.engine_busy_s.get(engine, 0.0)
    c["matmul_instruction_count"] = float(matmuls)
    c["activate_instruction_count"] = float(breakdown.engine_instructions.get("scalar", 0))
    c["psum_read_sbuf_write_count"] = evictions
    c["psum_read_sbuf_write_bytes"] = eviction_bytes
    dma = breakdown.dma
    c["dma_transfer_count"] = float(dma.transfers)
    c["dma_transfer_total_bytes"] = float(dma.total_bytes)
    c["dma_transfer_average_bytes"] = dma.average_bytes
    c["total_time"] = total
    c["neuroncore_cycle_count"] = total * spec.profiler_clock_hz
    c["peak_sbuf_bytes_per_partition"] = float(spill.peak_bytes_per_partition)
    return {k: float(v) for k, v in c.items() if not (k in OMIT_WHEN_ZERO and v == 0)}


def planner_counters(counters: dict[str, float]) -> dict[str, float]:
    """The subset AccelOpt shows its planner, in its order (missing zero counters stay missing)."""
    return {k: counters[k] for k in PLANNER_COUNTERS if k in counters}


__all__ = ["OMIT_WHEN_ZERO", "PLANNER_COUNTERS", "compute_counters", "pe_flops", "planner_counters"]
