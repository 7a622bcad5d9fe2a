"""The shared correctness rule: relative L2 in float64, NaN/Inf fail, dtype and size must match."""
import numpy as np

from accelopt_graph.nkibench import compare, load_task


def test_rule_on_plain_arrays():
    ref = np.linspace(1, 2, 1000, dtype=np.float32).reshape(10, 100)
    assert compare([ref.copy()], [ref], rtol=2e-5).ok
    close = ref * np.float32(1 + 1e-6)
    report = compare([close], [ref], rtol=2e-5)
    assert report.ok and 0 < report.rel_l2 < 2e-5
    far = ref * np.float32(1 + 1e-4)
    assert not compare([far], [ref], rtol=2e-5).ok
    assert compare([ref.reshape(1000)], [ref], rtol=2e-5).ok  # any C-order reshape is accepted


def test_nan_unwritten_and_wrong_outputs_fail():
    ref = np.ones((4, 8), np.float32)
    holes = ref.copy()
    holes[3, 5] = np.nan
    report = compare([holes], [ref], rtol=2e-5)
    assert not report.ok and "NaN" in report.message
    assert "float32" in compare([ref.astype(np.float16)], [ref], rtol=2e-5).message
    assert "elements" in compare([ref[:3]], [ref], rtol=2e-5).message
    assert "outputs" in compare([ref, ref], [ref], rtol=2e-5).message


def test_task_check_rejects_returning_the_input():
    task = load_task("silu", reduced=True)
    (x,) = task.kernel_inputs(42)
    assert not task.check(np.array(x), 42).ok
    good = task.forward(*task.numpy_inputs(42))[0]
    assert task.check(good, 42).ok
