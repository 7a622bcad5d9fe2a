"""Counters (trainium.md §5 conventions), spills, the timeline export and the hardware presets."""
from __future__ import annotations

import json

import pytest
import yaml
from perf_traces import affine, event, load, matmul, store, tile

from accelopt_graph.tools.nkisim.counters import PLANNER_COUNTERS, compute_counters
from accelopt_graph.tools.nkisim.hardware import available_specs, get_spec, load_spec
from accelopt_graph.tools.nkisim.perf_model import estimate_latency, spill_plan
from accelopt_graph.tools.nkisim.profile import profile_trace
from accelopt_graph.tools.nkisim.timeline import chrome_trace, write_chrome_trace
from accelopt_graph.tools.nkisim.trace import Buffer, Engine

TRN1 = get_spec("trn1")


def _mm_kernel(dtype: str):
    """out[128, 512] = a.T @ b with K = 256 in two accumulating fp32/bf16 passes, evicted and stored."""
    evs = [load(1, 11, (128, 128), dtype=dtype), load(1, 12, (128, 128), dtype=dtype, hbm_offset=(128, 0)),
           load(2, 21, (128, 512), dtype=dtype), load(2, 22, (128, 512), dtype=dtype, hbm_offset=(128, 0)),
           matmul(11, 21, 30, dtype=dtype), matmul(12, 22, 30, dtype=dtype, accumulate=True),
           event("tensor_copy", Engine.SCALAR, [tile(30, (128, 512), buffer=Buffer.PSUM)],
                 [tile(40, (128, 512))]),
           store(40, 3, (128, 512))]
    return evs


def test_matmul_counters_follow_profiler_conventions():
    trace = _mm_kernel("float32")
    b = estimate_latency(trace, TRN1)
    c = compute_counters(trace, b, TRN1)
    # 2*K*M*N per pass, fp32 counted twice (§5.4.3): 2 passes of 2*128*128*512, x2.
    assert c["hardware_flops"] == 2 * (2 * 128 * 128 * 512) * 2
    assert "transpose_flops" not in c  # absent when zero (§5.4.5)
    assert c["hbm_read_bytes"] == 4 * (2 * 128 * 128 + 2 * 128 * 512)
    assert c["hbm_write_bytes"] == 4 * 128 * 512
    # PSUM bytes are per partition: 2 matmul writes of 512 fp32, doubled for fp32; one eviction read.
    assert c["psum_write_bytes"] == 2 * 512 * 4 * 2
    assert c["psum_read_bytes"] == 512 * 4
    assert c["spill_save_bytes"] == 0 and c["spill_reload_bytes"] == 0
    assert c["peak_flops_bandwidth_ratio"] == pytest.approx(223.781, rel=1e-4)
    assert c["mm_arithmetic_intensity"] == pytest.approx(
        c["hardware_flops"] / (c["hbm_read_bytes"] + c["hbm_write_bytes"]))
    assert c["hfu_estimated_percent"] == pytest.approx(c["hardware_flops"] / (9.175e13 * b.total_s), rel=1e-3)
    assert 0 < c["scalar_engine_active_time_percent"] <= 1
    assert c["vector_engine_active_time_percent"] == 0
    assert set(PLANNER_COUNTERS) - set(c) == {"transpose_flops"}


def test_transposes_count_in_transpose_flops():
    ev = event("nc_transpose", Engine.TENSOR, [tile(1, (128, 128))],
               [tile(2, (128, 128), buffer=Buffer.PSUM)])
    trace = [ev]
    c = compute_counters(trace, estimate_latency(trace, TRN1), TRN1)
    # rmsnorm_matmul anchor: 2^23 flops per fp32 128x128 transpose (§5.4.3).
    assert c["transpose_flops"] == 2 ** 23 == c["hardware_flops"]
    assert c["mm_arithmetic_intensity"] == 0


def test_sbuf_overflow_spills_and_reloads():
    # Four 64 KiB-per-partition tiles are loaded, then all read again: 256 KiB > 192 KiB of SBUF.
    shape = (128, 16384)
    evs = [load(1, 100 + i, shape, hbm_offset=(128 * i, 0)) for i in range(4)]
    evs += [event("activation", Engine.SCALAR, [tile(100 + i, shape)], [tile(200, shape)])
            for i in range(4)]
    plan = spill_plan(evs, TRN1)
    assert plan.save_bytes > 0 and plan.reload_bytes == plan.save_bytes
    b = estimate_latency(evs, TRN1)
    c = compute_counters(evs, b, TRN1)
    assert c["spill_save_bytes"] == plan.save_bytes and c["spill_reload_bytes"] == plan.reload_bytes
    assert c["hbm_read_bytes"] == 4 * 128 * 16384 * 4 + plan.reload_bytes
    assert b.dma.count_by_kind["spill_save"] >= 1 and b.dma.count_by_kind["spill_reload"] >= 1
    fits = evs[:2] + evs[4:6]
    assert spill_plan(fits, TRN1).save_bytes == 0


def test_spilling_costs_time():
    shape = (128, 16384)
    evs = [load(1, 100 + i, shape, hbm_offset=(128 * i, 0)) for i in range(4)]
    evs += [event("activation", Engine.SCALAR, [tile(100 + i, shape)], [tile(300 + i, shape)])
            for i in range(4)]
    bigger = get_spec("trn1").model_copy(update={"sbuf_bytes_per_partition": 1 << 20})
    assert estimate_latency(evs, TRN1).total_s > estimate_latency(evs, bigger).total_s


def test_chrome_trace_has_one_track_per_engine_and_queue(tmp_path):
    trace = _mm_kernel("bfloat16")
    b = estimate_latency(trace, TRN1)
    doc = chrome_trace(b, trace, kernel_name="mm")
    names = {e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    assert {"tensor", "scalar"} <= names and any(n.startswith("dma_q") for n in names)
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(slices) == len(trace)
    assert {s["name"].split()[0] for s in slices} == {"load", "nc_matmul", "tensor_copy", "store"}
    by_tid: dict[int, list] = {}
    for s in slices:
        by_tid.setdefault(s["tid"], []).append((s["ts"], s["ts"] + s["dur"]))
    for spans in by_tid.values():  # a track never overlaps itself
        spans.sort()
        assert all(a[1] <= b[0] + 1e-9 for a, b in zip(spans, spans[1:]))
    path = write_chrome_trace(tmp_path / "t.json", b, trace)
    assert json.loads(path.read_text())["otherData"]["source"] == "simulator"


def test_profile_trace_carries_source_and_hardware(tmp_path):
    p = profile_trace(_mm_kernel("float32"), hardware="trn2", timeline=tmp_path / "x.json")
    assert p.source == "simulator" and p.hardware == "trn2"
    assert p.latency_ms > 0 and p.counters["total_time"] == pytest.approx(p.latency_ms / 1e3)
    assert p.dma.transfers == 5 and p.timeline_path
    assert list(p.planner_counters())[:2] == ["hbm_read_bytes", "hbm_write_bytes"]


def test_trn2_is_not_trn1():
    t1, t2 = profile_trace(_mm_kernel("bfloat16")), profile_trace(_mm_kernel("bfloat16"), hardware="trn2")
    assert t1.latency_ms != t2.latency_ms


def test_presets_have_a_source_for_every_constant(tmp_path):
    assert available_specs() == ["trn1", "trn2"]
    for name in available_specs():
        spec = get_spec(name)
        assert all(spec.sources[k] for k in spec.sources)
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"name": "bad", "base": "trn1",
                                   "constants": {"partitions": {"value": 64}}}))
    with pytest.raises(ValueError, match="partitions"):
        load_spec(bad)
    with pytest.raises(ValueError, match="unknown hardware"):
        get_spec("trn9")


def test_counters_are_deterministic():
    trace = [load(1, 100 + i, (128, 512), hbm_offset=(128 * i, 0), loops=[affine(1, i, 8)]) for i in range(8)]
    trace += [store(100 + i, 2, (128, 512), hbm_offset=(128 * i, 0)) for i in range(8)]
    wall = {"model_s", "simulate_s"}
    assert profile_trace(trace).model_dump(exclude=wall) == profile_trace(trace).model_dump(exclude=wall)


def test_hot_lines_rank_source_lines_by_engine_time():
    evs = [event("activation", Engine.SCALAR, [tile(1, (128, 4096))], [tile(2, (128, 4096))], line=7),
           event("activation", Engine.SCALAR, [tile(3, (128, 64))], [tile(4, (128, 64))], line=9),
           load(5, 6, (128, 512))]
    p = profile_trace(evs)
    top = p.hot_lines[0]
    assert (top.line, top.op, top.engine, top.instructions) == (7, "activation", "scalar", 1)
    assert top.share > 0.9 and sum(h.share for h in p.hot_lines if h.engine == "scalar") == pytest.approx(1)
    assert any(h.engine == "dma" and h.op == "load" for h in p.hot_lines)
