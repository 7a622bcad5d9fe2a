"""Each compiler rule: the illegal kernel is rejected with an actionable message, its twin runs."""
import numpy as np
import pytest

from accelopt_graph.tools import nkisim
from accelopt_graph.tools.nkisim import SimCompileError, SimRuntimeError, SimUnsupportedError

F32 = np.float32


def _arr(rng, *shape):
    return rng.standard_normal(shape).astype(F32)


CASES = [
    # rule, args (shapes), error class, message fragment, error code
    ("partitions", [(256, 64)], SimCompileError, "exceeds architecture limitation of 128",
     "err_num_partition_exceed_arch_limit"),
    ("psum_tile", [(128, 64)], SimCompileError, "at most 2048 bytes per partition",
     "err_psum_tile_exceed_bank_size"),
    ("matmul_stationary", [(128, 256), (128, 512)], SimCompileError,
     "stationary free size 256 exceeds the TensorE limit of 128", "err_matmul_size_exceed_arch_limit"),
    ("matmul_moving", [(128, 256), (128, 1024)], SimCompileError,
     "moving free size 1024 exceeds the TensorE limit of 512", "err_matmul_size_exceed_arch_limit"),
    ("matmul_psum_input", [(128, 128), (128, 512)], SimCompileError,
     "Expected operand 'stationary' of 'nc_matmul' to be in address space 'sbuf'",
     "err_unsupported_memory"),
    ("mixed_indexing", [(128, 64)], SimCompileError, "Mixing basic tensor indexing and advanced",
     "err_unsupported_mixing_basic_advanced_tensor_indexing"),
    ("scope", [(4, 128, 64)], SimCompileError, "referenced outside of its parent scope",
     "err_local_variable_used_out_of_scope"),
    ("sbuf_capacity", [(8, 128, 8192)], SimCompileError, "SBUF capacity exceeded",
     "err_out_of_memory"),
    ("psum_capacity", [(128, 512)], SimCompileError, "PSUM capacity exceeded", "err_out_of_memory"),
    ("out_of_bounds", [(200, 64)], SimRuntimeError, "Out-of-bound access for tensor `x`",
     "err_tensor_access_out_of_bound"),
    ("partition_mismatch", [(128, 64), (1, 64)], SimCompileError, "use .broadcast_to",
     "err_num_partition_mismatch"),
]


@pytest.mark.parametrize("rule,shapes,error,fragment,code", CASES, ids=[c[0] for c in CASES])
def test_rule_rejects_illegal_kernel_and_accepts_twin(kernels, rng, rule, shapes, error, fragment,
                                                      code):
    m = kernels("rules")
    args = [_arr(rng, *s) for s in shapes]
    with pytest.raises(error) as info:
        nkisim.simulate_kernel(getattr(m, f"{rule}_bad"), *args)
    assert fragment in str(info.value)
    assert info.value.code == code
    if code == "err_out_of_memory":  # found when the kernel finishes: the message names lines
        assert "largest live tiles" in str(info.value)
    else:
        assert info.value.line > 0 and info.value.file.endswith("rules.py")  # points at the kernel
    ok_args = args
    if rule == "partitions":
        ok_args = [_arr(rng, 128, 64)]
    out = nkisim.simulate_kernel(getattr(m, f"{rule}_ok"), *ok_args)
    assert not np.isnan(np.asarray(out)).any()


def test_matmul_contraction_mismatch(kernels, rng):
    m = kernels("rules")
    with pytest.raises(SimCompileError, match="contraction sizes differ: stationary has 64"):
        nkisim.simulate_kernel(m.matmul_contraction_bad, _arr(rng, 128, 256), _arr(rng, 128, 512))


def test_matmul_result_must_be_psum(kernels, rng):
    m = kernels("rules")
    with pytest.raises(SimCompileError, match="result of 'nc_matmul' to be in address space 'psum'"):
        nkisim.simulate_kernel(m.matmul_sbuf_result_bad, _arr(rng, 128, 128), _arr(rng, 128, 512))


def test_affine_order_check_reports_dependency(kernels, rng):
    m = kernels("rules")
    x = _arr(rng, 8, 128, 64)
    with pytest.raises(SimCompileError, match="affine_range iterations are not independent") as info:
        nkisim.simulate_kernel(m.affine_dependency_bad, x, check_affine_order=True)
    assert info.value.code == "err_unexpected_output_dependencies"
    report = nkisim.check_affine_iterations(m.affine_dependency_bad, x, raise_error=False)
    assert not report.independent and report.worst_rel_l2 > 1e-3
    good = nkisim.simulate_kernel(m.affine_dependency_ok, x, check_affine_order=True)
    np.testing.assert_allclose(good, np.cumsum(x, axis=0), rtol=1e-5, atol=1e-5)


def test_affine_order_check_accepts_independent_accumulation(kernels, rng):
    """PSUM accumulation across an affine K loop is allowed (associative)."""
    m = kernels("matmul_tiled")
    report = nkisim.check_affine_iterations(m.nki_matmul_tiled, _arr(rng, 512, 128),
                                            _arr(rng, 512, 512), raise_error=False)
    assert report.independent, report


def test_unwritten_output_is_an_error(kernels, rng):
    m = kernels("rules")
    with pytest.raises(SimCompileError, match="never written"):
        nkisim.simulate_kernel(m.unwritten_output_bad, _arr(rng, 128, 64))


def test_uninitialised_memory_is_nan(kernels, rng):
    m = kernels("rules")
    x = _arr(rng, 128, 64)
    out = nkisim.simulate_kernel(m.uninitialised_read, x)
    np.testing.assert_array_equal(out[:64], x[:64])
    assert np.isnan(out[64:]).all()


def test_unsupported_api_names_itself(kernels, rng):
    m = kernels("rules")
    with pytest.raises(SimUnsupportedError, match="nl.dropout is not supported"):
        nkisim.simulate_kernel(m.unsupported_api, _arr(rng, 128, 64))


def test_parameters_are_immutable(kernels, rng):
    m = kernels("rules")
    x = _arr(rng, 128, 64)
    before = x.copy()
    with pytest.raises(SimCompileError, match="immutable"):
        nkisim.simulate_kernel(m.mutate_parameter_bad, x)
    np.testing.assert_array_equal(x, before)


def test_control_flow_on_loop_index_warns(kernels, rng):
    m = kernels("mamba_scan")
    c, length, s = 128, 512, 2
    args = (rng.uniform(0.01, 0.1, (c, length)).astype(F32), _arr(rng, c, length),
            -rng.uniform(0.5, 1.5, (c, s)).astype(F32), _arr(rng, s, length), _arr(rng, s, length))
    res = nkisim.run_kernel(m.mamba_scan_kernel, args)
    assert any("control flow on a loop index" in w and "mamba_scan.py:33" in w
               for w in res.warnings)
    clean = nkisim.run_kernel(kernels("matmul_tiled").nki_matmul_tiled,
                              (_arr(rng, 128, 128), _arr(rng, 128, 512)))
    assert clean.warnings == []


def test_dma_cannot_write_psum(rng):
    from accelopt_graph.tools.nkisim import language as nl

    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        p = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.psum)
        p[...] = nl.load(x)
        nl.store(out, value=nl.copy(p))
        return out

    with pytest.raises(SimCompileError, match="DMA cannot write PSUM") as info:
        nkisim.simulate_kernel(kernel, _arr(rng, 128, 64))
    assert info.value.code == "err_unsupported_memory"


def test_operand_masks_are_reported_unsupported(rng):
    from accelopt_graph.tools.nkisim import language as nl

    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        i_f = nl.arange(64)[None, :]
        nl.store(out, value=nl.load(x[i_f < 32]))
        return out

    with pytest.raises(SimUnsupportedError, match="operand masks"):
        nkisim.simulate_kernel(kernel, _arr(rng, 128, 64))


def test_carried_dependency_found_in_the_trace(kernels, rng):
    m = kernels("rules")
    x = _arr(rng, 8, 128, 64)
    assert nkisim.run_kernel(m.affine_dependency_bad, (x,)).warnings == []  # opt-in check
    res = nkisim.run_kernel(m.affine_dependency_bad, (x,), check_affine=True)
    assert any("reads `run` written by another iteration" in w for w in res.warnings)
    with pytest.raises(SimCompileError, match="another iteration") as info:
        nkisim.run_kernel(m.affine_dependency_bad, (x,), strict_affine=True)
    assert info.value.code == "err_unexpected_output_dependencies"
    assert nkisim.run_kernel(m.affine_dependency_ok, (x,), strict_affine=True).warnings == []
    # accumulation in an affine loop (PSUM +=, acc = acc + x) is allowed
    assert nkisim.run_kernel(m.scope_ok, (x[:4],), strict_affine=True).warnings == []


def test_write_write_conflict_across_affine_iterations(rng):
    from accelopt_graph.tools.nkisim import language as nl

    def kernel(x):
        out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(4):
            nl.store(out, value=nl.load(x[i]))  # every iteration writes all of `out`
        return out

    with pytest.raises(SimCompileError, match="writes elements of `out`"):
        nkisim.run_kernel(kernel, (_arr(rng, 4, 128, 64),), strict_affine=True)


def test_shared_hbm_only_at_top_level(rng):
    from accelopt_graph.tools.nkisim import language as nl

    def kernel(x):
        for i in nl.affine_range(1):
            out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
            nl.store(out, value=nl.load(x))
        return out

    with pytest.raises(SimCompileError, match="top level") as info:
        nkisim.simulate_kernel(kernel, _arr(rng, 128, 8))
    assert info.value.code == "err_shared_hbm_must_in_kernel_level"


def test_assignment_shapes(rng):
    from accelopt_graph.tools.nkisim import language as nl

    def kernel(x, bad):
        out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 64), dtype=x.dtype)
        col = nl.sum(nl.load(x), axis=1)  # [128]: a partition vector
        t[...] = col  # broadcasts along the free dim
        if bad:
            small = nl.ndarray((128, 8), dtype=x.dtype)
            small[...] = nl.load(x)  # a larger source into a smaller destination
        nl.store(out, value=t)
        return out

    x = _arr(rng, 128, 64)
    out = nkisim.simulate_kernel(kernel, x, False)
    np.testing.assert_allclose(out, np.repeat(x.sum(1, keepdims=True), 64, axis=1), rtol=1e-5)
    with pytest.raises(SimCompileError, match="Illegal assignment destination shape") as info:
        nkisim.simulate_kernel(kernel, x, True)
    assert info.value.code == "err_illegal_assignment_shape"
