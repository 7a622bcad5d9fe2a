"""Every baseline passes the full correctness protocol in the simulator (reduced sizes), and the
protocol rejects the classic shortcuts: no max subtraction, unwritten output, returning an input."""
import pytest

from accelopt_graph.nkibench import list_tasks, load_task
from accelopt_graph.tools.backend import EvalStatus


def _evaluate(backend, settings, task, code):
    return backend.evaluate(task, code, settings)


@pytest.mark.parametrize("name", list_tasks())
def test_baseline_passes_every_seed_and_adversarial_case(sim_backend, settings, name):
    task = load_task(name, reduced=True)
    result = _evaluate(sim_backend, settings, task, task.baseline_code)
    assert result.status is EvalStatus.OK, result.error
    assert set(result.seeds) == {0, 21, 42, 63, 84}
    assert result.rel_l2 < task.rtol
    assert result.source == "simulator" and result.latency_ms > 0
    assert result.latency_ms >= task.peak_latency_ms("trn1")


def _mutate(code: str, old: str, new: str) -> str:
    assert old in code, f"mutation anchor {old!r} not found: the test would not test anything"
    return code.replace(old, new)


@pytest.mark.parametrize("name", ["bmm_softmax", "gqa_full"])
def test_softmax_without_max_subtraction_fails(sim_backend, settings, name):
    task = load_task(name, reduced=True)
    code = _mutate(task.baseline_code, "nisa.activation(op=nl.exp, data=", "nl.exp(")
    code = _mutate(code, ", bias=neg, scale=1.0)", ")")
    result = _evaluate(sim_backend, settings, task, code)
    assert result.status is EvalStatus.INCORRECT, (result.status, result.error)
    assert "adversarial" in result.error


def test_partly_unwritten_output_fails(sim_backend, settings):
    task = load_task("matmul", reduced=True)
    code = _mutate(task.baseline_code, "for a in nl.affine_range(MT):", "for a in nl.affine_range(MT - 1):")
    result = _evaluate(sim_backend, settings, task, code)
    assert result.status is EvalStatus.INCORRECT
    assert "NaN" in result.error


def test_returning_an_input_fails(sim_backend, settings):
    task = load_task("silu", reduced=True)
    code = _mutate(task.baseline_code, "    return out\n", "    return x\n")
    result = _evaluate(sim_backend, settings, task, code)
    assert result.status is not EvalStatus.OK


@pytest.mark.parametrize("name, params", [
    ("matmul", {"M": 256, "K": 256, "N": 512}),  # the sizes the graph tests use
    ("lora", {"M": 512, "N": 384, "K": 256}),  # N not a multiple of 512
    ("adamw", {"M": 200, "N": 512}),  # a partial (masked) last row tile
    ("transpose_matmul", {"M": 128, "K": 128, "N": 192}),  # only the static tail stripe
    ("bmm", {"B": 1, "M": 128, "K": 32, "N": 512}),
    ("swiglu", {"M": 512, "N": 384, "K": 128}),
    ("mamba", {"M": 1024, "C": 128, "S": 2}),  # the scan state carried across sequence chunks
])
def test_baselines_are_generic_over_their_parameters(name, params):
    """Our own (trusted) baselines, run in process: correct at shapes other than the test ones."""
    from accelopt_graph.tools.nkisim import load_module, simulate_kernel

    task = load_task(name, params=params)
    outputs = simulate_kernel(load_module(str(task.baseline_path)).kernel, *task.kernel_inputs(0))
    verdict = task.check(outputs, 0)
    assert verdict.ok, verdict.error
