"""The Neuron backend's logic without hardware (synthetic fixtures), and for real where the SDK is."""
import itertools
import json
import subprocess
from pathlib import Path

import pytest
from accelopt_graph.tools import neuron
from accelopt_graph.tools.backend import EvalSettings, EvalStatus
from accelopt_graph.tools.evaluation import MeasurementError
from accelopt_graph.tools.sandbox import SandboxJob
from eval_tasks import AddTask

FIXTURE = Path(__file__).parent / "fixtures" / "synthetic_summary_silu.json"  # synthetic


def test_device_env_pins_one_core_and_disables_auto_cast():
    env = neuron.device_env(core="7", base={"PATH": "/bin"})
    assert env == {"PATH": "/bin", "NEURON_CC_FLAGS": "--auto-cast=none", "NEURON_RT_NUM_CORES": "1",
                   "NEURON_RT_VISIBLE_CORES": "7"}
    assert "NEURON_RT_VISIBLE_CORES" not in neuron.device_env(core=None)
    assert neuron.BAREMETAL_COMPILE_OPTS == "--disable-dge --logical-nc-config=1"


def test_profiler_commands():
    neff, ntff = Path("/w/k.neff"), Path("/w/k.ntff")
    assert neuron.capture_command("neuron-profile", neff, ntff) == [
        "neuron-profile", "capture", "-n", "/w/k.neff", "-s", "/w/k.ntff"]
    assert neuron.summary_command("neuron-profile", neff, ntff) == [
        "neuron-profile", "view", "--output-format", "summary-json", "-n", "/w/k.neff", "-s", "/w/k.ntff"]


def test_parse_synthetic_summary_json_fills_absent_zero_counters():
    counters = neuron.parse_summary_json(FIXTURE.read_text())
    assert counters["total_time"] == pytest.approx(0.000612)
    assert counters["hbm_read_bytes"] == 117440512
    assert counters["dma_transfer_count"] == 7168  # numeric strings are numbers
    # absent when zero in real profiles (trainium.md 5.4 item 5): present as 0 for the planner
    assert counters["hardware_flops"] == 0 and counters["psum_write_bytes"] == 0
    assert "note" not in counters and "is_nki" not in counters
    assert set(neuron.PLANNER_COUNTERS) <= set(counters)


@pytest.mark.parametrize("text,match", [
    ("not json", "not JSON"), ("[]", "non-empty JSON object"), ('{"a": 3}', "first value"),
    ('{"a": {"hbm_read_bytes": 1}}', "total_time"), ('{"a": {"total_time": 0}}', "total_time"),
])
def test_malformed_summary_is_a_clear_error(text, match):
    with pytest.raises(neuron.SummaryFormatError, match=match):
        neuron.parse_summary_json(text)


def scripted(values):
    it = iter(values)
    return lambda: next(it)


def test_timing_protocol_stops_at_the_first_stable_measurement():
    noisy = [9.0, 9.0] + [1.0] * 9 + [1.05]  # warm-up, then 10 samples, 5% spread
    stable = [9.0, 9.0] + [2.0] * 5 + [2.01] * 5  # 0.5% spread
    t = neuron.timing_protocol(scripted(noisy + stable), warmup=2, iters=10, max_repeats=3)
    assert t.repeats == 2 and t.stable
    assert t.latency_ms == pytest.approx(2.005)
    assert t.all_spreads == pytest.approx((0.05, 0.005))
    assert t.stats()["iters"] == 10


def test_timing_protocol_keeps_the_least_noisy_when_never_stable():
    runs = []
    for spread in (0.10, 0.03, 0.20):
        runs += [5.0, 5.0] + [1.0] * 9 + [1.0 + spread]
    t = neuron.timing_protocol(scripted(runs), max_repeats=3)
    assert t.repeats == 3 and not t.stable
    assert t.spread == pytest.approx(0.03)
    assert t.latency_ms == pytest.approx((9 + 1.03) / 10)


def test_timing_protocol_with_an_injected_clock():
    ticks = itertools.count(0.0, 0.5e-3)  # every clock read advances 0.5 ms: each run takes 0.5 ms
    sampler = neuron.clocked(lambda: None, clock=lambda: next(ticks))
    t = neuron.timing_protocol(sampler, warmup=2, iters=10)
    assert t.latency_ms == pytest.approx(0.5) and t.repeats == 1 and t.spread < 1e-9


def test_timing_protocol_refuses_bad_settings_and_bad_samples():
    with pytest.raises(ValueError, match="iters"):
        neuron.timing_protocol(lambda: 1.0, iters=0)
    with pytest.raises(MeasurementError, match="non-positive"):
        neuron.timing_protocol(lambda: 0.0)


class FakeRunner:
    """Stands in for subprocess.run: answers neuron-profile with the synthetic summary."""

    def __init__(self, total_times):
        self.calls, self.times = [], iter(total_times)

    def __call__(self, cmd, **kwargs):
        self.calls.append((cmd, kwargs["env"].get("NEURON_RT_VISIBLE_CORES")))
        if cmd[1] == "capture":
            return subprocess.CompletedProcess(cmd, 0, "", "")
        doc = json.loads(FIXTURE.read_text())
        doc["kernel.neff"]["total_time"] = next(self.times)
        return subprocess.CompletedProcess(cmd, 0, json.dumps(doc), "")


def test_observer_times_the_neff_on_the_pinned_core(tmp_path, monkeypatch):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / neuron.NEFF_NAME).write_bytes(b"NEFF")
    monkeypatch.setattr(neuron, "_profiler_path", lambda: "/opt/aws/neuron/bin/neuron-profile")
    runner = FakeRunner([1e-3] * 12)
    job = SandboxJob(code="", cases=[], env={"NEURON_RT_VISIBLE_CORES": "3"},
                     observe_args={"warmup": 2, "iters": 10, "max_repeats": 3, "max_spread": 0.01})
    observed = neuron.observe_device_profile(tmp_path, job, runner=runner)
    assert observed["latency_ms"] == pytest.approx(1.0) and observed["stable"]
    assert observed["counters"]["hbm_write_bytes"] == 117440512
    assert len(runner.calls) == 24 and {core for _, core in runner.calls} == {"3"}
    assert [c[0][1] for c in runner.calls[:2]] == ["capture", "view"]


def test_observer_reports_profiler_failure_as_data(tmp_path, monkeypatch):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / neuron.NEFF_NAME).write_bytes(b"NEFF")
    monkeypatch.setattr(neuron, "_profiler_path", lambda: "neuron-profile")

    def failing(cmd, **kwargs):
        return subprocess.CompletedProcess(cmd, 1, "", "NRT: no device")

    observed = neuron.observe_device_profile(tmp_path, SandboxJob(code="", cases=[]), runner=failing)
    assert "NRT: no device" in observed["error"]


def test_missing_sdk_is_a_per_task_bench_error_naming_the_pip_repository(monkeypatch):
    monkeypatch.setattr(neuron.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(neuron, "_profiler_path", lambda: None)
    backend = neuron.NeuronBackend()
    r = backend.evaluate(AddTask(), "def kernel(a, b):\n    return a + b\n", EvalSettings())
    assert r.status is EvalStatus.BENCH_ERROR and r.source == "hardware"
    assert "https://pip.repos.neuron.amazonaws.com" in r.error and "neuronxcc" in r.error
    assert "neuron-profile" in r.error and "nkisim" in r.error
    assert backend.hardware_info("trn1")["sdk_missing"]


NKI_ADD = """
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.add(nl.load(a), nl.load(b)))
    return out
"""


@pytest.mark.trainium
def test_real_neuron_backend_on_a_neuron_core():
    pytest.importorskip("neuronxcc")
    if neuron.missing_sdk():
        pytest.skip(neuron.missing_sdk())
    settings = EvalSettings(backend="neuron", seeds=(0, 21), timeout_s=900, simulate_first=True)
    r = neuron.NeuronBackend(cores=[0]).evaluate(AddTask(peak_ms=0.0), NKI_ADD, settings)
    assert r.status is EvalStatus.OK, r.error
    assert r.source == "hardware" and r.latency_ms > 0 and r.counters["total_time"] > 0
    assert r.latency_stats["iters"] == 10


class FakeNeuronExecutor:
    """Plays the sandbox + trusted worker: computes a + b (or a - b when `wrong`) per case."""

    name = "fake"

    def __init__(self, *, wrong_in_simulation=False):
        self.modes, self.wrong = [], wrong_in_simulation

    def run(self, job):
        from accelopt_graph.tools.sandbox import CaseRun, SandboxRun
        from accelopt_graph.tools.sandbox_child import array_digest

        mode = job.env["ACCELOPT_NEURON_MODE"]
        self.modes.append((mode, job.env["NEURON_CC_FLAGS"], job.observe))
        sign = -1 if (self.wrong and mode == "simulate") else 1
        cases = tuple(CaseRun(status="ok", outputs=(a + sign * b,),
                              input_digests=(array_digest(a), array_digest(b))) for a, b in job.cases)
        observed = ({"latency_ms": 0.25, "stable": True, "counters": {"total_time": 2.5e-4},
                     "latency_stats": {"mean": 0.25, "spread": 0.004}} if job.observe else {})
        return SandboxRun(status="ok", cases=cases, observed=observed)

    def close(self):
        pass


def test_neuron_backend_orchestration_with_pre_check(monkeypatch):
    monkeypatch.setattr(neuron, "missing_sdk", lambda: None)
    executor = FakeNeuronExecutor()
    backend = neuron.NeuronBackend(executor=executor)
    settings = EvalSettings(backend="neuron", seeds=(0, 21), simulate_first=True)
    r = backend.evaluate(AddTask(peak_ms=0.1), "def kernel(a, b):\n    return a + b\n", settings)
    assert r.status is EvalStatus.OK and r.source == "hardware" and r.backend == "neuron"
    assert r.latency_ms == 0.25 and r.counters == {"total_time": 2.5e-4}
    assert r.details["timing_stable"] and r.percent_of_peak == pytest.approx(40.0)
    assert [m[0] for m in executor.modes] == ["simulate", "device"]
    assert all(flags == "--auto-cast=none" for _, flags, _ in executor.modes)
    assert executor.modes[1][2] == "accelopt_graph.tools.neuron:observe_device_profile"


def test_failed_pre_check_spends_no_device_time(monkeypatch):
    monkeypatch.setattr(neuron, "missing_sdk", lambda: None)
    executor = FakeNeuronExecutor(wrong_in_simulation=True)
    settings = EvalSettings(backend="neuron", seeds=(0,), simulate_first=True)
    r = neuron.NeuronBackend(executor=executor).evaluate(AddTask(), "def kernel(a, b):\n    return a\n", settings)
    assert r.status is EvalStatus.INCORRECT and r.details["stage"] == "simulate_first"
    assert [m[0] for m in executor.modes] == ["simulate"]
