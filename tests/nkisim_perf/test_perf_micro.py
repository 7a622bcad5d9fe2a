"""Micro-kernels on hand-made traces whose time is computed by hand from trainium.md §2."""
from __future__ import annotations

import pytest
from perf_traces import affine, event, load, matmul, sequential, store, tile

from accelopt_graph.tools.nkisim.hardware import get_spec
from accelopt_graph.tools.nkisim.perf_model import (
    Timeline,
    dma_transfer_cost,
    estimate_latency,
    instruction_cost,
)
from accelopt_graph.tools.nkisim.trace import Buffer, Engine

TRN1 = get_spec("trn1")
PE_HZ, DVE_HZ, ACT_HZ = 2.8e9, 1.12e9, 1.4e9
# Each SBUF/PSUM access costs ~60 cycles (trainium.md §1.3), half of it engine occupancy (EXP, the
# trn1.yaml assumption) and half latency; plus 100 cycles static latency (§2.1).
EXP2, EXP3 = 2 * 30, 3 * 30
LAT2, LAT3 = 100 + 2 * 30, 100 + 3 * 30


def test_one_bf16_matmul_is_moving_free_cycles_plus_latency():
    # 128x128 stationary, 512 moving, bf16: max(min(64,128), 512) = 512 PE cycles (S9 nc_matmul).
    b = estimate_latency([matmul(1, 2, 3, dtype="bfloat16")], TRN1)
    assert b.total_s == pytest.approx((512 + EXP3 + LAT3) / PE_HZ, rel=1e-9)
    assert b.engine_busy_s["tensor"] == pytest.approx((512 + EXP3) / PE_HZ)


def test_fp32_matmul_costs_four_passes():
    c16 = instruction_cost(matmul(1, 2, 3, dtype="bfloat16"), TRN1)
    c32 = instruction_cost(matmul(1, 2, 3, dtype="float32"), TRN1)
    overhead = EXP3 / PE_HZ
    assert c32.busy_s - overhead == pytest.approx(4 * (c16.busy_s - overhead))
    assert c32.busy_s == pytest.approx((2048 + EXP3) / PE_HZ)


def test_small_moving_is_floored_by_stationary_load():
    # matrix-vector: 128-wide stationary gives ~64 cycles, the reverse ~128 (S6).
    mv = instruction_cost(matmul(1, 2, 3, m=128, n=1, dtype="bfloat16"), TRN1)
    vm = instruction_cost(matmul(1, 2, 3, m=1, n=128, dtype="bfloat16"), TRN1)
    assert mv.busy_s == pytest.approx((64 + EXP3) / PE_HZ)
    assert vm.busy_s == pytest.approx((128 + EXP3) / PE_HZ)


def _chain(n_ops: int, *, dependent: bool, free: int = 512):
    evs = []
    for i in range(n_ops):
        src = 10 + i if dependent else 100 + 2 * i
        dst = 11 + i if dependent else 101 + 2 * i
        evs.append(event("tensor_scalar", Engine.VECTOR, [tile(src, (128, free))], [tile(dst, (128, free))],
                         engine_explicit=True))
    return evs


def test_dependent_vector_chain_pays_latency_each_step():
    b = estimate_latency(_chain(10, dependent=True), TRN1)
    assert b.total_s == pytest.approx(10 * (512 + EXP2 + LAT2) / DVE_HZ, rel=1e-9)


def test_independent_vector_ops_pipeline_back_to_back():
    b = estimate_latency(_chain(10, dependent=False), TRN1)
    assert b.total_s == pytest.approx((10 * (512 + EXP2) + LAT2) / DVE_HZ, rel=1e-9)


def test_single_element_activation_chain_matches_the_documented_anchor():
    # S6 observed 189 ns per back-to-back dependent 1-element activation on NC-v2.
    evs = [event("activation", Engine.SCALAR, [tile(10 + i, (128, 1))], [tile(11 + i, (128, 1))])
           for i in range(20)]
    per_op = estimate_latency(evs, TRN1).total_s / 20
    assert per_op == pytest.approx((64 + EXP2 + LAT2) / ACT_HZ)
    assert abs(per_op - 189e-9) / 189e-9 < 0.10


def test_independent_ops_on_different_engines_overlap():
    ops = [
        event("tensor_tensor", Engine.VECTOR, [tile(1, (128, 2048)), tile(2, (128, 2048))],
              [tile(3, (128, 2048))]),
        event("activation", Engine.SCALAR, [tile(4, (128, 2048))], [tile(5, (128, 2048))]),
        matmul(6, 7, 8, dtype="float32"),
    ]
    alone = [estimate_latency([op], TRN1).total_s for op in ops]
    together = estimate_latency(ops, TRN1).total_s
    assert together == pytest.approx(max(alone), rel=1e-9)
    assert together < sum(alone) - min(alone)


def test_dma_bound_copy_runs_at_hbm_bandwidth_within_15_percent():
    n, shape = 16, (128, 2048)
    evs = []
    for i in range(n):
        loop = [affine(1, i, n)]
        evs.append(load(1, 500 + i, shape, hbm_offset=(128 * i, 0), loops=loop))
        evs.append(store(500 + i, 2, shape, hbm_offset=(128 * i, 0), loops=loop))
    b = estimate_latency(evs, TRN1)
    moved = 2 * n * 128 * 2048 * 4
    assert b.total_s == pytest.approx(moved / 410e9, rel=0.15)
    assert b.total_s >= moved / 410e9
    assert b.bottleneck == "hbm"
    assert b.dma.transfers == 2 * n and b.dma.total_bytes == moved


def test_small_fragments_cost_whole_descriptors():
    # 4-byte rows: each fragment pays for dma_min_descriptor_bytes of engine time (trainium.md §2.4).
    wide = dma_transfer_cost(nbytes=128 * 2048, partitions=128, chunk_bytes=2048, touches_hbm=True,
                             spec=TRN1, kind="load")
    thin = dma_transfer_cost(nbytes=128 * 2048, partitions=128, chunk_bytes=4, touches_hbm=True,
                             spec=TRN1, kind="load")
    assert thin.engine_s == pytest.approx(wide.engine_s * 512 / 4)
    assert thin.descriptors == 128 * 2048 // 4


def test_sequential_iterations_do_not_overlap_but_affine_ones_do():
    def kernel(frame):
        evs = []
        for i in range(4):
            # small tiles: the per-transfer latency dominates, so overlap matters
            evs.append(load(1, 50 + i, (128, 64), hbm_offset=(128 * i, 0), loops=[frame(7, i, 4)]))
            evs.append(event("activation", Engine.SCALAR, [tile(50 + i, (128, 64))],
                             [tile(60 + i, (128, 64))], loops=[frame(7, i, 4)]))
            evs.append(store(60 + i, 2, (128, 64), hbm_offset=(128 * i, 0), loops=[frame(7, i, 4)]))
        return evs

    seq = estimate_latency(kernel(sequential), TRN1).total_s
    aff = estimate_latency(kernel(affine), TRN1).total_s
    one = estimate_latency(kernel(sequential)[:3], TRN1).total_s
    assert seq == pytest.approx(4 * one, rel=1e-9)
    assert aff < 0.6 * seq


def test_psum_accumulation_group_streams_on_the_tensor_engine():
    # Near-memory accumulation (S1): MMs into one PSUM bank issue back to back, the read-add-write
    # is not a separate access request.
    evs = [matmul(10 + k, 20 + k, 99, accumulate=k > 0, dtype="bfloat16") for k in range(8)]
    b = estimate_latency(evs, TRN1)
    assert b.total_s == pytest.approx((8 * (512 + EXP3) + LAT3) / PE_HZ, rel=1e-9)


def test_raw_dependency_waits_for_the_producer_across_engines():
    evs = [load(1, 5, (128, 512)),
           event("activation", Engine.SCALAR, [tile(5, (128, 512))], [tile(6, (128, 512))])]
    b = estimate_latency(evs, TRN1)
    dma_end = next(s.end_s for s in b.slices if s.kind == "load")
    act = next(s for s in b.slices if s.track == "scalar")
    assert act.start_s == pytest.approx(dma_end)


def test_trn1_vector_and_gpsimd_serialize_on_sbuf_but_not_on_trn2():
    ops = [event("tensor_scalar", Engine.VECTOR, [tile(1, (128, 4096))], [tile(2, (128, 4096))],
                 engine_explicit=True),
           event("iota", Engine.GPSIMD, [], [tile(3, (128, 4096), dtype="int32")], dtype="int32")]
    t1 = estimate_latency(ops, TRN1)
    t2 = estimate_latency(ops, get_spec("trn2"))
    dve, pool = t1.engine_busy_s["vector"], t1.engine_busy_s["gpsimd"]
    assert t1.total_s >= dve + pool
    assert t2.total_s < t2.engine_busy_s["vector"] + t2.engine_busy_s["gpsimd"]


def test_strided_sbuf_access_halves_bandwidth_on_trn1():
    plain = event("tensor_scalar", Engine.VECTOR, [tile(1, (128, 1024))], [tile(2, (128, 1024))])
    strided = event("tensor_scalar", Engine.VECTOR, [tile(1, (128, 1024), inner_stride_bytes=64)],
                    [tile(2, (128, 1024))])
    overhead = EXP2 / DVE_HZ
    assert instruction_cost(strided, TRN1).busy_s - overhead == pytest.approx(
        2 * (instruction_cost(plain, TRN1).busy_s - overhead))


def test_trn2_vector_perf_mode_speeds_up_bf16_copies():
    ev = event("tensor_copy", Engine.VECTOR, [tile(1, (128, 4096), dtype="bfloat16")],
               [tile(2, (128, 4096), dtype="bfloat16")], dtype="bfloat16")
    trn2 = get_spec("trn2")
    assert instruction_cost(ev, trn2).busy_s == pytest.approx((4096 / 4 + EXP2) / 0.96e9)


def test_timeline_fills_gaps_out_of_order():
    t = Timeline()
    assert t.reserve(10.0, 5.0) == 10.0
    assert t.reserve(0.0, 3.0) == 0.0  # fits before
    assert t.reserve(0.0, 8.0) == 15.0  # gap 3..10 too small
    assert t.reserve(3.0, 7.0) == 3.0  # exactly fills 3..10
    assert t.starts == [0.0] and t.ends == [23.0]


def test_deterministic():
    evs = _chain(5, dependent=True) + [load(1, 5, (128, 512)), matmul(5, 5, 9)]
    a, b = estimate_latency(evs, TRN1), estimate_latency(evs, TRN1)
    assert a.total_s == b.total_s and a.slices == b.slices


def test_hbm_psum_write_into_hbm_region_checks_engine_name():
    with pytest.raises(ValueError, match="not a compute instruction"):
        instruction_cost(load(1, 2, (128, 4)), TRN1)
    assert Buffer.HBM.value == "hbm"


def test_psum_has_eight_banks_so_tensor_engine_waits_for_evictions():
    # 16 independent 128x512 fp32 matmul tiles, each a whole 2 KiB bank, each evicted by ScalarE.
    evs = []
    for j in range(16):
        evs.append(matmul(1, 2, 100 + j, dtype="bfloat16"))
        evs.append(event("tensor_copy", Engine.SCALAR, [tile(100 + j, (128, 512), buffer=Buffer.PSUM)],
                         [tile(200 + j, (128, 512))]))
    def tracks(spec):
        b = estimate_latency(evs, spec)
        return ([s for s in b.slices if s.track == "tensor"], [s for s in b.slices if s.track == "scalar"])

    # ScalarE evicts slower than TensorE fills, so the 16th tile must wait for the 8th eviction.
    mm, copies = tracks(TRN1)
    assert all(mm[j + 8].start_s >= copies[j].end_s for j in range(8))
    assert mm[15].start_s > 15 * mm[0].busy_s
    roomy = TRN1.model_copy(update={"psum_banks": 16, "psum_bytes_per_partition": 32768})
    mm16, copies16 = tracks(roomy)
    assert mm16[15].start_s == pytest.approx(15 * mm16[0].busy_s)
    assert mm16[15].start_s < copies16[7].end_s


def test_engine_agnostic_work_is_spread_over_vector_and_scalar():
    # Without an explicit engine the compiler may run tensor_scalar on DVE or ACT (S9); the model puts
    # each one where it finishes first, as AccelOpt's profiles show ScalarE picking up such work.
    def ops(**attrs):
        return [event("tensor_scalar", Engine.VECTOR, [tile(10 + 2 * i, (128, 2048))],
                      [tile(11 + 2 * i, (128, 2048))], op0="multiply", **attrs) for i in range(8)]

    pinned = estimate_latency(ops(engine_explicit=True), TRN1)
    free = estimate_latency(ops(), TRN1)
    assert pinned.engine_instructions["scalar"] == 0
    assert free.engine_instructions["scalar"] > 0 and free.engine_instructions["vector"] > 0
    assert free.total_s < 0.7 * pinned.total_s
    bitwise = [event("tensor_scalar", Engine.VECTOR, [tile(1, (128, 64))], [tile(2, (128, 64))],
                     op0="bitwise_and")]
    assert estimate_latency(bitwise, TRN1).engine_instructions["scalar"] == 0


def test_unknown_ops_and_dtypes_fall_back_to_the_engine_rule():
    # An op the table does not know is costed by its engine: VectorE one input = max(MIN_II, N).
    ev = event("brand_new_op", Engine.VECTOR, [tile(1, (128, 1024))], [tile(2, (128, 1024))],
               engine_explicit=True)
    assert instruction_cost(ev, TRN1).busy_s == pytest.approx((1024 + EXP2) / DVE_HZ)
    odd = event("tensor_copy", Engine.VECTOR, [tile(1, (128, 8), dtype="int64")],
                [tile(2, (128, 8), dtype="int64")], dtype="uint64", engine_explicit=True)
    assert estimate_latency([odd], get_spec("trn2")).total_s > 0
