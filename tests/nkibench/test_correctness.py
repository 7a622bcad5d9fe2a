"""Task.check applies the shared rule: NaN (unwritten) outputs, returned inputs and wrong shapes fail."""
import numpy as np

from accelopt_graph.nkibench import load_task


def test_oracle_output_passes_and_returning_the_input_fails():
    task = load_task("silu", reduced=True)
    (x,) = task.kernel_inputs(42)
    assert not task.check(np.array(x), 42).ok
    good = task.forward(*task.numpy_inputs(42))[0]
    verdict = task.check(good, 42)
    assert verdict.ok and verdict.rel_l2 == 0.0


def test_unwritten_part_and_lowered_precision_fail():
    task = load_task("matmul", reduced=True)
    ref = np.array(task.reference_outputs(0)[0])
    holes = ref.copy()
    holes[-1, -1, -7:] = np.nan  # what a kernel that skips the last columns leaves behind (NaN poison)
    verdict = task.check(holes, 0)
    assert not verdict.ok and "NaN" in verdict.error
    assert not task.check(ref.astype(np.float16), 0).ok
    assert not task.check(ref[:1], 0).ok
    assert task.check(ref.reshape(-1), 0).ok  # any C-order reshape of the right size is accepted


def test_adversarial_inputs_defeat_shortcuts():
    """A softmax without max subtraction overflows; an rmsnorm with eps misses the tiny rows."""
    task = load_task("bmm_softmax", reduced=True)
    lhs, rhs = task.numpy_inputs(0, "large_logits")
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(lhs @ rhs)
        naive = (e / e.sum(axis=2, keepdims=True)).astype(np.float32)
    assert not task.check(naive, 0, "large_logits").ok

    task = load_task("rmsnorm_matmul", reduced=True)
    x, w = task.numpy_inputs(0, "small_rows")
    with_eps = (x / np.sqrt((x * x).mean(axis=1, keepdims=True) + np.float32(1e-5))) @ w
    assert not task.check(with_eps.astype(np.float32), 0, "small_rows").ok


def test_dropping_eps_fails_the_small_rows_cases():
    for name in ("add_rmsnorm_matmul", "matmul_add_rmsnorm"):
        task = load_task(name, reduced=True)
        x, w, eps, z, g = task.numpy_inputs(0, "small_rows")
        y = x + z if name == "add_rmsnorm_matmul" else x @ w + z
        no_eps = y / np.sqrt((y * y).mean(axis=1, keepdims=True))
        out = (no_eps * g) @ w if name == "add_rmsnorm_matmul" else no_eps * g
        assert not task.check(out.astype(np.float32), 0, "small_rows").ok, name
        assert task.check(task.forward(x, w, eps, z, g)[0], 0, "small_rows").ok


def test_silu_via_exp_of_x_overflows_on_large_inputs():
    task = load_task("silu", reduced=True)
    (x,) = task.numpy_inputs(0, "large_magnitude")
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x)
        shortcut = (x * e / (1 + e)).astype(np.float32)  # inf / inf = NaN for x > 88.7
    assert not task.check(shortcut.reshape(128, -1, x.shape[1]), 0, "large_magnitude").ok
    (plain,) = task.numpy_inputs(0)
    e = np.exp(plain)
    assert task.check((plain * e / (1 + e)).astype(np.float32), 0).ok  # only the adversarial case catches it
