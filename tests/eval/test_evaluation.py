"""The trusted side's verdicts, end to end through real sandbox processes (python engine)."""
import threading
import time

import pytest
from accelopt_graph.tools.backend import EvalSettings, EvalStatus
from accelopt_graph.tools.evaluation import (
    Measurement,
    MeasurementError,
    evaluate_candidate,
    plan_cases,
)
from accelopt_graph.tools.pool import DeviceSlots, LocalPool
from eval_tasks import AddTask

SETTINGS = EvalSettings(seeds=(0, 21, 42), timeout_s=20)
ADD = "def kernel(a, b):\n    return a + b\n"
POOL = LocalPool(DeviceSlots.cpu_workers(2))


def fixed(latency_ms):
    return lambda run, timed, hardware: Measurement(latency_ms=latency_ms, counters={"total_time": latency_ms / 1e3})


def evaluate(code, task=None, *, measure=fixed(1.0), policy=True, settings=SETTINGS):
    return evaluate_candidate(task or AddTask(), code, settings, executor=POOL, engine="python",
                              measure=measure, backend="test", source="simulator", policy=policy)


def test_correct_kernel_is_ok_with_trusted_latency_and_provenance():
    r = evaluate(ADD)
    assert r.status is EvalStatus.OK and r.is_correct, r.error
    assert r.latency_ms == 1.0 and r.counters == {"total_time": 1e-3}
    assert r.seeds == (0, 21, 42) and r.rel_l2 == 0.0
    assert r.percent_of_peak == pytest.approx(100 * 1e-6 / 1.0)
    assert r.code_hash and r.source == "simulator" and r.wall_s > 0
    assert r.details["timed_case"] == "seed 42"
    assert type(r).model_validate_json(r.model_dump_json()) == r  # the graph caches results as JSON


def test_empty_code_is_no_code_and_syntax_error_is_compile_error():
    assert evaluate("   \n").status is EvalStatus.NO_CODE
    r = evaluate("def kernel(a, b)\n    return a\n")
    assert r.status is EvalStatus.COMPILE_ERROR and "SyntaxError" in r.error


def test_policy_violation_is_rejected_and_flagged_without_running():
    r = evaluate("import os\ndef kernel(a, b):\n    return a + b\n")
    assert r.status is EvalStatus.REJECTED and r.flag == "sandbox_policy"
    assert "import of 'os'" in r.error and "sandbox" not in r.details


def test_wrong_dtype_and_wrong_size_are_incorrect():
    r = evaluate("def kernel(a, b):\n    return (a + b).astype('float64')\n")
    assert r.status is EvalStatus.INCORRECT and "dtype float64" in r.error
    r = evaluate("def kernel(a, b):\n    return (a + b)[:64]\n")
    assert r.status is EvalStatus.INCORRECT and "does not reshape" in r.error


def test_same_values_in_another_c_order_shape_pass():
    r = evaluate("def kernel(a, b):\n    return (a + b).reshape(64, -1)\n")
    assert r.status is EvalStatus.OK, r.error


def test_latency_below_physical_peak_is_rejected_and_flagged():
    r = evaluate(ADD, AddTask(peak_ms=5.0))
    assert r.status is EvalStatus.REJECTED and r.latency_ms is None and not r.is_correct
    assert r.flag == "below_peak"
    assert r.details["claimed_latency_ms"] == 1.0 and "below what the hardware can do" in r.error


def test_measurement_failure_is_bench_error():
    def broken(run, timed, hardware):
        raise MeasurementError("profiler crashed")

    r = evaluate(ADD, measure=broken)
    assert r.status is EvalStatus.BENCH_ERROR and r.error == "profiler crashed"


def test_failure_names_the_failing_seed():
    code = "import numpy as np\ndef kernel(a, b):\n    assert a[0, 0] < 10, 'x'\n    return a + b + (a[0,0] > 0.5)\n"
    r = evaluate(code)
    assert r.status is EvalStatus.INCORRECT and r.error.startswith("seed ")


def test_plan_keeps_configured_seeds_plus_adversarial_cases_and_times_the_last_seed():
    from eval_tasks import SoftmaxTask

    plan = plan_cases(SoftmaxTask(), (0, 42))
    assert plan.pairs == ((0, None), (42, None), (7, "large"))
    assert plan.timed == 1
    with pytest.raises(ValueError, match="none of the configured seeds"):
        plan_cases(AddTask(), (5,))


def test_slots_bound_concurrency_and_callers_block_until_free():
    slots = DeviceSlots.cpu_workers(2)
    active, peak, lock = [0], [0], threading.Lock()

    def work():
        with slots.acquire():
            with lock:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            time.sleep(0.05)
            with lock:
                active[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 2


def test_neuron_core_slots_pin_one_core_each():
    slots = DeviceSlots.neuron_cores([4, 5])
    with slots.acquire() as env_a, slots.acquire() as env_b:
        assert {env_a["NEURON_RT_VISIBLE_CORES"], env_b["NEURON_RT_VISIBLE_CORES"]} == {"4", "5"}
    with pytest.raises(ValueError, match="duplicate"):
        DeviceSlots(["0", "0"])


def test_concurrent_evaluations_from_many_threads_are_all_correct():
    results = [None] * 5

    def one(i):
        results[i] = evaluate(ADD)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.status for r in results] == [EvalStatus.OK] * 5
    assert len({r.code_hash for r in results}) == 1


def test_a_kernel_file_that_fails_to_load_names_no_seed():
    r = evaluate("raise ImportError('no module named tile_utils')\ndef kernel(a, b):\n    return a\n")
    assert r.status is EvalStatus.RUNTIME_ERROR and not r.error.startswith("seed")
    assert "tile_utils" in r.error and r.details["sandbox"]["stage"] == "load"


def test_peak_guard_allows_the_documented_physical_margin():
    from accelopt_graph.tools.checks import PHYSICAL_PEAK_MARGIN, below_peak

    assert PHYSICAL_PEAK_MARGIN == pytest.approx(1.125)
    assert below_peak(0.95, 1.0) is None  # beats the metric's peak, within the ScalarE clock margin
    assert below_peak(0.85, 1.0) is not None
    assert below_peak(0.1, None) is None


class _AddWithShapes(AddTask):
    def kernel_output_shapes(self):
        return {"out": (128, self.free)}


def test_output_cap_grows_to_fit_the_tasks_own_outputs_on_every_case():
    small_cap = SETTINGS.model_copy(update={"output_limit_mb": 1})
    big = 4096  # 2 MiB per output: over a 1 MiB cap, as bmm's 1 GiB output was over the default 1 GiB
    refused = evaluate(ADD, AddTask(free=big), settings=small_cap)
    assert refused.status is not EvalStatus.OK and "output limit" in refused.error
    accepted = evaluate(ADD, _AddWithShapes(free=big), settings=small_cap)
    assert accepted.status is EvalStatus.OK, accepted.error


def test_output_limit_is_the_configured_one_unless_the_outputs_need_more():
    from accelopt_graph.tools.evaluation import output_limit_mb

    assert output_limit_mb(AddTask(), 3, SETTINGS) == SETTINGS.output_limit_mb
    assert output_limit_mb(_AddWithShapes(free=64), 3, SETTINGS) == SETTINGS.output_limit_mb
    # 3 cases x 128 x 2^20 elements x 8 bytes = 3 GiB, plus 64 MiB
    assert output_limit_mb(_AddWithShapes(free=2**20), 3, SETTINGS) == 3 * 1024 + 64
