"""Import hook, kernel entry points and SPMD launches."""
import sys

import numpy as np
import pytest

from accelopt_graph.tools import nkisim
from accelopt_graph.tools.nkisim import SimCompileError


def test_activate_is_scoped():
    assert "neuronxcc" not in sys.modules
    with nkisim.activate():
        import neuronxcc.nki as nki
        import neuronxcc.nki.isa as nisa
        import neuronxcc.nki.language as nl
        import neuronxcc.nki.typing as nt
        from neuronxcc.nki import trace
        from neuronxcc.nki.language import par_dim
        assert nl.par_dim is par_dim and callable(nisa.nc_matmul) and nki.trace is trace
        assert nt.mutable_tensor is not None
    for name in ("neuronxcc", "neuronxcc.nki", "neuronxcc.nki.language", "neuronxcc.nki.isa"):
        assert name not in sys.modules


def test_activate_restores_a_previous_module():
    sentinel = type(sys)("neuronxcc")
    sys.modules["neuronxcc"] = sentinel
    try:
        with nkisim.activate():
            assert sys.modules["neuronxcc"] is not sentinel
        assert sys.modules["neuronxcc"] is sentinel
    finally:
        del sys.modules["neuronxcc"]


def test_load_module_syntax_error(tmp_path):
    p = tmp_path / "bad.py"
    p.write_text("import neuronxcc.nki.language as nl\ndef kernel(:\n")
    with pytest.raises(SimCompileError, match="syntax error") as info:
        nkisim.load_module(p)
    assert info.value.line == 2


def test_load_module_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="kernel file not found"):
        nkisim.load_module(tmp_path / "nope.py")


def test_jit_kernel_called_directly_simulates(kernels, rng):
    m = kernels("tensor_add")
    a = rng.standard_normal((128, 512)).astype(np.float32)
    out = m.nki_tensor_add_kernel[1, 1](a, a)
    np.testing.assert_array_equal(out, 2 * a)


def test_program_ids_and_counts(tmp_path, rng):
    p = tmp_path / "ids.py"
    p.write_text(
        "import neuronxcc.nki as nki\n"
        "import neuronxcc.nki.language as nl\n"
        "@nki.jit\n"
        "def kernel(x):\n"
        "    out = nl.ndarray((2, 3, 128, 1), dtype=nl.float32, buffer=nl.shared_hbm)\n"
        "    i, j = nl.program_id(0), nl.program_id(1)\n"
        "    v = i * 10 + j + 100 * nl.num_programs() + 1000 * nl.program_ndim()\n"
        "    t = nl.full((128, 1), v, dtype=nl.float32)\n"
        "    nl.store(out[i, j], value=t)\n"
        "    return out\n")
    m = nkisim.load_module(p)
    out = nkisim.simulate_kernel(m.kernel[2, 3], np.zeros(1, np.float32))
    expect = np.array([[i * 10 + j + 600 + 2000 for j in range(3)] for i in range(2)])
    np.testing.assert_array_equal(out[:, :, 0, 0], expect)


def test_plain_function_and_trace_decorator(rng):
    with nkisim.activate():
        from neuronxcc import nki
        import neuronxcc.nki.language as nl

    @nki.trace
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.exp(nl.load(x)))
        return out

    x = rng.standard_normal((64, 32)).astype(np.float32)
    np.testing.assert_allclose(nkisim.simulate_kernel(kernel, x), np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(nkisim.simulate_kernel(kernel.func, x), np.exp(x), rtol=1e-6)


def test_nl_outside_a_kernel_is_a_clear_error():
    from accelopt_graph.tools.nkisim import language as nl
    with pytest.raises(nkisim.SimRuntimeError, match="inside a simulated kernel"):
        nl.zeros((128, 4), nl.float32)


def test_load_source_runs_kernel_text(rng):
    src = ("import neuronxcc.nki.language as nl\n"
           "def kernel(x):\n"
           "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
           "    nl.store(out, value=nl.multiply(nl.load(x), 3.0))\n"
           "    return out\n")
    m = nkisim.load_source(src)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    np.testing.assert_allclose(nkisim.simulate_kernel(m.kernel, x), 3 * x, rtol=1e-6)
    with pytest.raises(SimCompileError, match="syntax error"):
        nkisim.load_source("def kernel(:\n")


def test_loop_reduce_is_order_independent(kernels, rng):
    m = kernels("misc_ops")
    x = rng.standard_normal((4, 128, 64)).astype(np.float32)
    assert nkisim.check_affine_iterations(m.max_over_blocks, x, raise_error=False).independent


def test_beta2_front_end(kernels, rng, rel_l2):
    m = kernels("beta2_matmul")
    a = rng.standard_normal((256, 256)).astype(np.float32)
    b = rng.standard_normal((256, 1024)).astype(np.float32)
    out, trace = nkisim.run_kernel(m.matmul_beta2, (a, b), strict_affine=True)
    assert rel_l2(out, np.maximum(a.T @ b, 0)) < 1e-5
    flags = [e.attrs["accumulate"] for e in trace if e.op == "nc_matmul"]
    assert flags[:2] == [False, True]  # accumulate=None: the first write overwrites
    idx = nkisim.simulate_kernel(m.iota_beta2, np.zeros(1, np.float32))
    np.testing.assert_array_equal(idx, 5 + np.arange(128 * 64).reshape(128, 64))
    assert "nki" not in sys.modules


def test_beta2_removed_names_are_reported():
    with nkisim.activate():
        import nki.language as nl2
        with pytest.raises(nkisim.SimUnsupportedError, match="removed in Beta 2"):
            nl2.arange(4)
