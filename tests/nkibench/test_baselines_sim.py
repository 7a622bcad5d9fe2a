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
