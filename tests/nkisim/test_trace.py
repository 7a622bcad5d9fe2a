"""The instruction trace handed to the performance model, and trace-only mode."""
import numpy as np

from accelopt_graph.tools import nkisim
from accelopt_graph.tools.nkisim.trace import Buffer, Engine, LoopKind


def _matmul_args(rng, k=512, m=256, n=1024):
    return (rng.standard_normal((k, m)).astype(np.float32),
            rng.standard_normal((k, n)).astype(np.float32))


def _shape_of(trace):
    return [(e.op, e.engine, e.line, [(a.region, a.nbytes) for a in e.reads],
             [(a.region, a.nbytes) for a in e.writes], [(f.kind, f.iteration) for f in e.loops])
            for e in trace]


def test_trace_only_records_the_same_trace(kernels, rng):
    m = kernels("matmul_tiled")
    args = _matmul_args(rng)
    full = nkisim.run_kernel(m.nki_matmul_tiled, args)
    fast = nkisim.run_kernel(m.nki_matmul_tiled, args, compute=False)
    assert fast.outputs is None
    assert _shape_of(full.trace) == _shape_of(fast.trace)


def test_matmul_events_carry_sizes_loops_and_accumulation(kernels, rng):
    m = kernels("matmul_tiled")
    outputs, trace = nkisim.run_kernel(m.nki_matmul_tiled, _matmul_args(rng))
    mms = [e for e in trace if e.op == "nc_matmul"]
    assert len(mms) == 2 * 2 * 4  # (M/128) x (N/512) x (K/128)
    e = mms[0]
    assert e.engine is Engine.TENSOR and e.dtype == "float32"
    assert (e.attrs["stationary_free"], e.attrs["moving_free"], e.partitions) == (128, 512, 128)
    assert e.attrs["accumulate"] is True
    assert e.writes[0].buffer is Buffer.PSUM  # retargeted into the PSUM accumulator
    assert [f.kind for f in e.loops] == [LoopKind.AFFINE] * 3
    assert e.file.endswith("matmul_tiled.py") and e.line > 0
    # one PSUM accumulator per (m, n): the 4 K-steps write the same tensor id
    assert len({x.writes[0].tensor_id for x in mms[:4]}) == 1
    assert mms[0].writes[0].tensor_id != mms[4].writes[0].tensor_id


def test_loads_are_dma_with_contiguous_runs(kernels, rng):
    m = kernels("matmul_tiled")
    _, trace = nkisim.run_kernel(m.nki_matmul_tiled, _matmul_args(rng))
    loads = [e for e in trace if e.op == "load"]
    assert all(e.engine is Engine.DMA for e in loads)
    lhs = loads[0]
    hbm, sbuf = lhs.reads[0], lhs.writes[0]
    assert hbm.buffer is Buffer.HBM and sbuf.buffer is Buffer.SBUF
    assert hbm.region == ((0, 128), (0, 128)) and hbm.nbytes == 128 * 128 * 4
    assert hbm.contiguous_bytes == 128 * 4  # one row of the 256-wide lhsT
    assert (sbuf.partitions, sbuf.free_elems) == (128, 128)


def test_masked_access_counts_only_valid_bytes(kernels, rng):
    m = kernels("masked_tiles")
    a = rng.standard_normal((300, 600)).astype(np.float32)
    _, trace = nkisim.run_kernel(m.masked_scale_add, (a, a))
    last = [e for e in trace if e.op == "load"][-1]  # rows 256..299, cols 512..599
    assert last.reads[0].region == ((256, 300), (512, 600))
    assert last.reads[0].nbytes == 44 * 88 * 4 and last.reads[0].partitions == 44


def test_nl_matmul_emits_pe_transpose(rng):
    from accelopt_graph.tools.nkisim import language as nl

    def kernel(x, y):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
        acc += nl.matmul(nl.load(x), nl.load(y))
        nl.store(out, value=nl.copy(acc))
        return out

    x = rng.standard_normal((128, 128)).astype(np.float32)
    y = rng.standard_normal((128, 512)).astype(np.float32)
    out, trace = nkisim.run_kernel(kernel, (x, y))
    np.testing.assert_allclose(out, x @ y, rtol=1e-4, atol=1e-4)
    ops = [e.op for e in trace]
    assert ops.index("nc_transpose") + 1 == ops.index("nc_matmul")


def test_tiles_in_loop_get_fresh_ids(kernels, rng):
    m = kernels("matmul_tiled")
    _, trace = nkisim.run_kernel(m.nki_matmul_tiled, _matmul_args(rng))
    loads = [e for e in trace if e.op == "load"]
    assert len({e.writes[0].tensor_id for e in loads}) == len(loads)


def test_plain_range_loops_are_sequential_frames(tmp_path, rng):
    p = tmp_path / "k.py"
    p.write_text(
        "import neuronxcc.nki.language as nl\n"
        "def kernel(x):\n"
        "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
        "    assert len(range(3)) == 3 and list(reversed(range(2))) == [1, 0]\n"
        "    for i in range(x.shape[0]):\n"
        "        nl.store(out[i], value=nl.load(x[i]))\n"
        "    return out\n")
    m = nkisim.load_module(p)
    x = rng.standard_normal((3, 128, 8)).astype(np.float32)
    out, trace = nkisim.run_kernel(m.kernel, (x,))
    np.testing.assert_array_equal(out, x)
    loads = [e for e in trace if e.op == "load"]
    assert [(f.kind, f.iteration, f.trip_count) for e in loads for f in e.loops] == [
        (LoopKind.SEQUENTIAL, i, 3) for i in range(3)]


def test_pinned_engine_is_marked(rng):
    from accelopt_graph.tools.nkisim import isa as nisa
    from accelopt_graph.tools.nkisim import language as nl

    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        a = nisa.tensor_scalar(t, np.multiply, 2.0, engine=nisa.scalar_engine)
        b = nisa.tensor_scalar(a, np.add, 1.0)
        nl.store(out, value=b)
        return out

    x = rng.standard_normal((128, 8)).astype(np.float32)
    out, trace = nkisim.run_kernel(kernel, (x,))
    np.testing.assert_allclose(out, 2 * x + 1, rtol=1e-6)
    ts = [e for e in trace if e.op == "tensor_scalar"]
    assert ts[0].engine is Engine.SCALAR and ts[0].attrs.get("engine_explicit") is True
    assert ts[1].engine is Engine.VECTOR and "engine_explicit" not in ts[1].attrs


def test_spmd_programs_are_an_affine_loop(kernels, rng):
    m = kernels("tensor_add")
    a = rng.standard_normal((256, 1024)).astype(np.float32)
    res = nkisim.run_kernel(m.nki_tensor_add_kernel[2, 2], (a, a), strict_affine=True)
    frames = [e.loops[0] for e in res.trace]
    assert {f.loop_id for f in frames} == {0} and {f.trip_count for f in frames} == {4}
    assert sorted({f.iteration for f in frames}) == [0, 1, 2, 3]
    assert all(f.kind is LoopKind.AFFINE for f in frames)
