"""Directional checks on real kernels run through the interpreter: what any kernel engineer expects."""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from accelopt_graph.tools.nkisim import load_module, profile_kernel

KERNELS = Path(__file__).with_name("kernels")
RNG = np.random.default_rng(0)


def _load(name: str):
    return load_module(KERNELS / f"{name}.py")


def _mm_operands(n: int = 2048):
    return RNG.standard_normal((128, 128), dtype=np.float32), RNG.standard_normal((128, n), dtype=np.float32)


def test_hoisting_a_loop_invariant_transpose_lowers_latency():
    m = _load("transpose_hoist")
    a, b = _mm_operands(4096)
    out_loop, slow = profile_kernel(m.in_loop, a, b)
    out_hoist, fast = profile_kernel(m.hoisted, a, b)
    np.testing.assert_allclose(out_loop, out_hoist, rtol=1e-6)
    assert fast.latency_ms < 0.95 * slow.latency_ms
    assert fast.counters["transpose_flops"] * 32 == slow.counters["transpose_flops"]
    np.testing.assert_allclose(out_hoist, 4 * (a @ b), rtol=1e-4, atol=1e-3)


def test_fusing_two_elementwise_passes_lowers_hbm_bytes_and_latency():
    m = _load("elementwise_fusion")
    x = RNG.standard_normal((1024, 512), dtype=np.float32)
    out2, two = profile_kernel(m.two_passes, x)
    out1, one = profile_kernel(m.fused, x)
    np.testing.assert_allclose(out1, np.exp(x) * 2, rtol=1e-5)
    np.testing.assert_allclose(out2, out1, rtol=1e-6)
    hbm = lambda p: p.counters["hbm_read_bytes"] + p.counters["hbm_write_bytes"]  # noqa: E731
    assert hbm(one) == hbm(two) / 2
    assert one.latency_ms < 0.7 * two.latency_ms


def test_moving_free_512_beats_128_for_the_same_matmul():
    m = _load("matmul_moving")
    aT, b = _mm_operands()
    out512, p512 = profile_kernel(m.moving_512, aT, b)
    out128, p128 = profile_kernel(m.moving_128, aT, b)
    np.testing.assert_allclose(out512, out128, rtol=1e-5)
    assert p512.latency_ms < p128.latency_ms
    assert p512.counters["hardware_flops"] == p128.counters["hardware_flops"]


def test_fp32_matmul_is_about_four_times_slower_than_bf16_on_the_tensor_engine():
    m = _load("matmul_moving")
    aT, b = _mm_operands()
    _, p32 = profile_kernel(m.moving_512, aT, b, trace_only=True)
    _, p16 = profile_kernel(m.moving_512, aT.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16),
                            trace_only=True)
    assert p32.bottleneck == p16.bottleneck == "tensor"
    assert 3.2 < p32.engine_busy_ms["tensor"] / p16.engine_busy_ms["tensor"] <= 4.0
    assert 3.0 < p32.latency_ms / p16.latency_ms <= 4.0


def test_more_loads_in_flight_help_until_bandwidth_saturates():
    m = _load("dma_inflight")
    x = RNG.standard_normal((128 * 64, 128), dtype=np.float32)  # 512-byte rows: full-rate descriptors
    latency = {}
    for k in (1, 2, 4, 8, 16, 32):
        out, p = profile_kernel(m.make(k), x)
        assert np.array_equal(out, x)
        latency[k] = p.latency_ms
    ks = sorted(latency)
    assert all(latency[a] >= latency[b] for a, b in zip(ks, ks[1:]))
    assert latency[1] > 1.5 * latency[8]
    assert latency[16] < 1.1 * latency[32]
    assert latency[32] * 1e-3 >= 2 * x.nbytes / 410e9  # never beats HBM bandwidth


def test_a_kernel_that_spills_shows_spill_bytes():
    m = _load("spill")
    x = RNG.standard_normal((4, 128, 16384), dtype=np.float32)  # 4 x 64 KiB per partition live
    out, spilled = profile_kernel(m.all_live, x)
    np.testing.assert_allclose(out[..., 0], np.exp(x).sum(-1), rtol=1e-4)
    _, streamed = profile_kernel(m.streamed, x, trace_only=True)
    assert spilled.counters["spill_save_bytes"] > 0 and spilled.counters["spill_reload_bytes"] > 0
    assert streamed.counters["spill_save_bytes"] == streamed.counters["spill_reload_bytes"] == 0
    assert spilled.latency_ms > streamed.latency_ms


def test_trace_only_gives_the_same_timing_and_no_outputs():
    m = _load("matmul_moving")
    aT, b = _mm_operands(1024)
    out, full = profile_kernel(m.moving_512, aT, b)
    none, fast = profile_kernel(m.moving_512, aT, b, trace_only=True)
    assert none is None and out is not None and fast.trace_only
    assert fast.latency_ms == full.latency_ms and fast.counters == full.counters


def test_same_kernel_same_numbers(tmp_path):
    m = _load("elementwise_fusion")
    x = RNG.standard_normal((512, 512), dtype=np.float32)
    runs = [profile_kernel(m.fused, x, timeline=tmp_path / f"t{i}.json")[1] for i in range(2)]
    assert runs[0].latency_ms == runs[1].latency_ms and runs[0].counters == runs[1].counters
    assert (tmp_path / "t0.json").read_text() == (tmp_path / "t1.json").read_text()


@pytest.mark.parametrize("hardware", ["trn1", "trn2"])
def test_profile_is_labelled_simulator(hardware):
    m = _load("elementwise_fusion")
    _, p = profile_kernel(m.fused, RNG.standard_normal((256, 512), dtype=np.float32), hardware=hardware)
    assert p.source == "simulator" and p.hardware == hardware and p.latency_ms > 0


def test_grid_programs_are_all_timed():
    # Legacy NKI runs the SPMD grid serially on one core (trainium.md §3.1): 4 programs, 4x the work.
    m = _load("spmd_scale")
    x = RNG.standard_normal((512, 512), dtype=np.float32)
    out, four = profile_kernel(m.kernel, x, grid=(4,))
    np.testing.assert_allclose(out, 2 * x)
    _, one = profile_kernel(m.kernel, x, grid=(1,), trace_only=True)
    assert four.events == 4 * one.events and four.dma.transfers == 4 * one.dma.transfers
    assert four.counters["hbm_read_bytes"] == x.nbytes and four.latency_ms > one.latency_ms
