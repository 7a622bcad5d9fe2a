"""Tutorial-style kernels run unmodified and match NumPy (relative L2 < 1e-5 in fp32)."""
import numpy as np

from accelopt_graph.tools import nkisim

TOL = 1e-5


def test_spmd_tensor_add(kernels, rng):
    m = kernels("tensor_add")
    a = rng.standard_normal((256, 1024)).astype(np.float32)
    b = rng.standard_normal((256, 1024)).astype(np.float32)
    out = nkisim.simulate_kernel(m.nki_tensor_add_kernel[2, 2], a, b)
    np.testing.assert_array_equal(out, a + b)


def test_spmd_partial_grid_leaves_nan(kernels, rng):
    """Only programs that run write their tile; the rest of a fresh HBM output stays NaN."""
    m = kernels("tensor_add")
    a = rng.standard_normal((256, 1024)).astype(np.float32)
    out = nkisim.simulate_kernel(m.nki_tensor_add_kernel[1, 2], a, a)
    np.testing.assert_array_equal(out[:128], 2 * a[:128])
    assert np.isnan(out[128:]).all()


def test_tiled_matmul_psum_accumulation(kernels, rng, rel_l2):
    m = kernels("matmul_tiled")
    lhsT = rng.standard_normal((512, 256)).astype(np.float32)
    rhs = rng.standard_normal((512, 1024)).astype(np.float32)
    assert rel_l2(nkisim.simulate_kernel(m.nki_matmul_tiled, lhsT, rhs), lhsT.T @ rhs) < TOL


def test_matmul_identity_transpose(kernels, rng, rel_l2):
    m = kernels("matmul_identity_transpose")
    a = rng.standard_normal((256, 384)).astype(np.float32)
    b = rng.standard_normal((384, 512)).astype(np.float32)
    assert rel_l2(nkisim.simulate_kernel(m.matmul_identity_transpose, a, b), a @ b) < TOL


def test_softmax_masked_rows(kernels, rng, rel_l2):
    m = kernels("softmax")
    x = rng.standard_normal((300, 200)).astype(np.float32)
    e = np.exp(x - x.max(1, keepdims=True))
    assert rel_l2(nkisim.simulate_kernel(m.softmax_kernel, x), e / e.sum(1, keepdims=True)) < TOL


def test_layernorm_bn_stats(kernels, rng, rel_l2):
    m = kernels("layernorm")
    x = rng.standard_normal((256, 1024)).astype(np.float32)
    g, b = rng.standard_normal(1024).astype(np.float32), rng.standard_normal(1024).astype(np.float32)
    ref = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * g + b
    assert rel_l2(nkisim.simulate_kernel(m.layernorm_kernel, x, g, b, 1e-5), ref) < TOL


def test_rmsnorm_activation_reduce(kernels, rng, rel_l2):
    m = kernels("rmsnorm")
    x = rng.standard_normal((300, 256)).astype(np.float32)
    g = rng.standard_normal(256).astype(np.float32)
    ref = x / np.sqrt((x ** 2).mean(1, keepdims=True) + 1e-6) * g
    assert rel_l2(nkisim.simulate_kernel(m.rmsnorm_kernel, x, g), ref) < TOL


def test_transpose2d_three_ways(kernels, rng):
    m = kernels("transpose2d")
    x = rng.standard_normal((256, 384)).astype(np.float32)
    for out in nkisim.simulate_kernel(m.transpose2d_kernel, x):
        np.testing.assert_array_equal(out, x.T)


def test_mamba_selective_scan(kernels, rng, rel_l2):
    m = kernels("mamba_scan")
    c, length, s = 256, 512, 4
    delta = rng.uniform(0.01, 0.1, (c, length)).astype(np.float32)
    u = rng.standard_normal((c, length)).astype(np.float32)
    a = -rng.uniform(0.5, 1.5, (c, s)).astype(np.float32)
    b = rng.standard_normal((s, length)).astype(np.float32)
    cc = rng.standard_normal((s, length)).astype(np.float32)
    y = np.zeros((c, length))
    for j in range(s):
        h = np.zeros(c)
        for t in range(length):
            h = np.exp(delta[:, t] * a[:, j]) * h + delta[:, t] * u[:, t] * b[j, t]
            y[:, t] += cc[j, t] * h
    assert rel_l2(nkisim.simulate_kernel(m.mamba_scan_kernel, delta, u, a, b, cc), y) < TOL


def test_rope_partition_rebasing(kernels, rng, rel_l2):
    m = kernels("rope")
    x = rng.standard_normal((128, 64)).astype(np.float32)
    c = rng.standard_normal((64, 64)).astype(np.float32)
    s = rng.standard_normal((64, 64)).astype(np.float32)
    ref = np.concatenate([x[:64] * c - x[64:] * s, x[64:] * c + x[:64] * s])
    assert rel_l2(nkisim.simulate_kernel(m.rope_kernel, x, c, s), ref) < TOL


def test_masked_partial_tiles_out_of_bounds(kernels, rng):
    m = kernels("masked_tiles")
    a = rng.standard_normal((300, 600)).astype(np.float32)
    b = rng.standard_normal((300, 600)).astype(np.float32)
    np.testing.assert_array_equal(nkisim.simulate_kernel(m.masked_scale_add, a, b), 2 * a + b)


def test_loop_reduce_max(kernels, rng):
    m = kernels("misc_ops")
    x = rng.standard_normal((4, 128, 64)).astype(np.float32)
    np.testing.assert_array_equal(nkisim.simulate_kernel(m.max_over_blocks, x), x.max(0))


def test_affine_select_and_iota(kernels, rng):
    m = kernels("misc_ops")
    x = rng.standard_normal((128, 128)).astype(np.float32)
    out, idx = nkisim.simulate_kernel(m.causal_mask, x)
    np.testing.assert_array_equal(out, np.where(np.tril(np.ones((128, 128))) > 0, x, -np.inf))
    np.testing.assert_array_equal(idx, np.arange(128 * 128).reshape(128, 128))


def test_vector_engine_ops(kernels, rng, rel_l2):
    m = kernels("misc_ops")
    x = rng.standard_normal((128, 64)).astype(np.float32)
    y = rng.standard_normal((128, 64)).astype(np.float32)
    o1, o2, o3, o4, o5 = nkisim.simulate_kernel(m.vector_ops, x, y)
    assert rel_l2(o1, (2 - x) * 3) < TOL
    assert rel_l2(o2, x.sum(0, keepdims=True)) < TOL
    np.testing.assert_array_equal(o3, np.maximum(x, y))
    assert rel_l2(o4, 0.5 * x + y) < TOL
    assert rel_l2(o5, (2 * x).sum(1, keepdims=True)) < TOL


def test_bfloat16_rounds_once(kernels, rng):
    """bf16 inputs are stored through ml_dtypes; the add computes in fp32 and rounds on output."""
    import ml_dtypes
    m = kernels("tensor_add")
    a = rng.standard_normal((128, 512)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((128, 512)).astype(ml_dtypes.bfloat16)
    out = nkisim.simulate_kernel(m.nki_tensor_add_kernel[1, 1], a, b)
    assert out.dtype == np.dtype(ml_dtypes.bfloat16)
    ref = (a.astype(np.float32) + b.astype(np.float32)).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(out.astype(np.float32), ref.astype(np.float32))


def test_permuted_free_dims_copy(kernels, rng):
    m = kernels("tutorial_patterns")
    x = rng.standard_normal((128, 64)).astype(np.float32)
    out = nkisim.simulate_kernel(m.transpose_free_dims, x)
    np.testing.assert_array_equal(out.reshape(128, 8, 8), x.reshape(128, 8, 8).transpose(0, 2, 1))


def test_nested_views_of_block_tensor(kernels, rng):
    m = kernels("tutorial_patterns")
    x = rng.standard_normal((4, 128, 256)).astype(np.float32)
    np.testing.assert_array_equal(nkisim.simulate_kernel(m.block_tiles, x), x)


def test_avgpool_arange_arithmetic(kernels, rng, rel_l2):
    m = kernels("tutorial_patterns")
    x = rng.standard_normal((64, 8, 12)).astype(np.float32)
    ref = x.reshape(64, 4, 2, 6, 2).mean(axis=(2, 4))
    assert rel_l2(nkisim.simulate_kernel(m.avgpool2d, x, 2), ref) < TOL


def test_attention_tutorial_style(kernels, rng, rel_l2):
    m = kernels("attention")
    s, d = 512, 64
    q = rng.standard_normal((s, d)).astype(np.float32)
    k = rng.standard_normal((s, d)).astype(np.float32)
    v = rng.standard_normal((s, d)).astype(np.float32)
    x = q @ k.T / np.sqrt(d)
    p = np.exp(x - x.max(1, keepdims=True))
    ref = (p / p.sum(1, keepdims=True)) @ v
    out = nkisim.simulate_kernel(m.attention_kernel, np.ascontiguousarray(q.T),
                                 np.ascontiguousarray(k.T), v)
    assert rel_l2(out, ref) < TOL


def test_returning_a_view_of_the_output(rng):
    from accelopt_graph.tools.nkisim import language as nl

    def kernel(x):
        out = nl.ndarray((2, 128, 8), dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out[1], value=nl.load(x))
        return out[1]

    x = rng.standard_normal((128, 8)).astype(np.float32)
    np.testing.assert_array_equal(nkisim.simulate_kernel(kernel, x), x)


def test_topk_instructions_and_predicated_copy(rng):
    from accelopt_graph.tools.nkisim import isa as nisa
    from accelopt_graph.tools.nkisim import language as nl

    def kernel(x, p):
        top = nl.ndarray((128, 8), dtype=x.dtype, buffer=nl.shared_hbm)
        idx = nl.ndarray((128, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
        rest = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        sel = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        m8 = nisa.max8(src=t)
        nl.store(top, value=m8)
        nl.store(idx, value=nisa.nc_find_index8(data=t, vals=m8))
        nl.store(rest, value=nisa.nc_match_replace8(data=t, vals=m8, imm=-1e9))
        dst = nl.zeros(x.shape, dtype=x.dtype)
        nisa.tensor_copy_predicated(src=t, dst=dst, predicate=nl.load(p))
        nl.store(sel, value=dst)
        return top, idx, rest, sel

    x = rng.standard_normal((128, 64)).astype(np.float32)
    p = (rng.random((128, 64)) > 0.5).astype(np.uint8)
    top, idx, rest, sel = nkisim.simulate_kernel(kernel, x, p)
    order = np.argsort(-x, axis=1)[:, :8]
    np.testing.assert_array_equal(top, np.take_along_axis(x, order, axis=1))
    np.testing.assert_array_equal(idx, order)
    expect = x.copy()
    np.put_along_axis(expect, order, -1e9, axis=1)
    np.testing.assert_array_equal(rest, expect)
    np.testing.assert_array_equal(sel, np.where(p > 0, x, 0))


def test_dma_transpose(rng):
    from accelopt_graph.tools.nkisim import isa as nisa
    from accelopt_graph.tools.nkisim import language as nl

    def kernel(x):
        out = nl.ndarray((64, 128), dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nisa.dma_transpose(x))
        return out

    x = rng.standard_normal((128, 64)).astype(np.float32)
    np.testing.assert_array_equal(nkisim.simulate_kernel(kernel, x), x.T)


def test_indirect_row_gather(rng):
    """An SBUF tile of indices selects HBM rows (embedding lookup)."""
    from accelopt_graph.tools.nkisim import language as nl

    def kernel(table, ids):
        out = nl.ndarray((128, table.shape[1]), dtype=table.dtype, buffer=nl.shared_hbm)
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(table.shape[1])[None, :]
        idx = nl.load(ids[i_p, nl.arange(1)[None, :]])
        nl.store(out[i_p, i_f], value=nl.load(table[idx[i_p, 0], i_f]))
        return out

    table = rng.standard_normal((1000, 64)).astype(np.float32)
    ids = rng.integers(0, 1000, (128, 1)).astype(np.int32)
    np.testing.assert_array_equal(nkisim.simulate_kernel(kernel, table, ids), table[ids[:, 0]])


def test_compiler_emitted_style_matmul(kernels, rng, rel_l2):
    m = kernels("compiler_style")
    a = rng.standard_normal((256, 384)).astype(np.float32)
    b = rng.standard_normal((384, 1024)).astype(np.float32)
    res = nkisim.run_kernel(m.matmul, (a, b), strict_affine=True)
    assert rel_l2(res.outputs, a @ b) < TOL
    # a PSUM tensor with block dims counts one block (one bank), plus a transpose result's bank
    assert res.peak_psum_bytes_per_partition <= 2 * 2048
