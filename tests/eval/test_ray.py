"""The same evaluations through the local pool and a local Ray instance give identical results."""
import pytest
from accelopt_graph.tools.backend import EvalSettings
from accelopt_graph.tools.evaluation import Measurement, evaluate_candidate
from accelopt_graph.tools.pool import DeviceSlots, LocalPool
from eval_tasks import AddTask

ray = pytest.importorskip("ray")

KERNELS = {
    "ok": "def kernel(a, b):\n    return a + b\n",
    "incorrect": "def kernel(a, b):\n    return a - b\n",
    "mutates": "def kernel(a, b):\n    a += 1\n    return a + b\n",
    "crash": "def kernel(a, b):\n    raise IndexError('tile out of range')\n",
    "rejected": "import os\ndef kernel(a, b):\n    return a + b\n",
}
VOLATILE = {"wall_s", "details"}


def _measure(run, timed, hardware):
    case = run.cases[timed]
    total = float(sum(float(o.sum()) for o in case.outputs))
    return Measurement(latency_ms=1.0 + abs(total) % 1.0)


@pytest.fixture(scope="module")
def ray_executor():
    from accelopt_graph.tools.ray_executor import RayExecutor

    # two fake NeuronCores: Ray pins tasks that request them with NEURON_RT_VISIBLE_CORES
    executor = RayExecutor(init_kwargs={"num_cpus": 2, "resources": {"neuron_cores": 2},
                                        "include_dashboard": False, "log_to_driver": False})
    yield executor
    executor.close()


@pytest.mark.slow
def test_local_pool_and_ray_give_identical_results(ray_executor):
    settings = EvalSettings(seeds=(0, 21), timeout_s=60)
    task = AddTask()
    results = {}
    for name, executor in (("local", LocalPool(DeviceSlots.cpu_workers(2))), ("ray", ray_executor)):
        results[name] = {k: evaluate_candidate(task, code, settings, executor=executor,
                                               engine="python", measure=_measure, backend="test",
                                               source="simulator").model_dump(exclude=VOLATILE)
                         for k, code in KERNELS.items()}
    assert results["local"] == results["ray"]
    assert {k: r["status"] for k, r in results["ray"].items()} == {
        "ok": "ok", "incorrect": "incorrect", "mutates": "incorrect",
        "crash": "runtime_error", "rejected": "rejected"}


@pytest.mark.slow
def test_simulator_backend_is_identical_on_ray_and_locally(ray_executor):
    from pathlib import Path

    from accelopt_graph.nkibench import load_task
    from accelopt_graph.tools.sim_backend import SimBackend

    attacks = Path(__file__).parent / "adversarial"
    task = load_task("silu", reduced=True)
    settings = EvalSettings(seeds=(0, 21), timeout_s=60)
    kernels = {"baseline": task.baseline_code,
               **{n: (attacks / f"{n}.py").read_text() for n in ("honest_silu", "partial_write", "forks")}}
    results = {}
    for name, executor in (("local", LocalPool(DeviceSlots.cpu_workers(2))), ("ray", ray_executor)):
        backend = SimBackend(executor=executor)
        results[name] = {k: backend.evaluate(task, code, settings).model_dump(exclude=VOLATILE)
                         for k, code in kernels.items()}
    assert results["local"] == results["ray"]
    assert results["ray"]["baseline"]["status"] == "ok" and results["ray"]["baseline"]["latency_ms"] > 0
    assert results["ray"]["partial_write"]["status"] == "incorrect"


@pytest.mark.slow
def test_neuron_core_requests_are_pinned_inside_the_sandbox(ray_executor):
    import numpy as np
    from accelopt_graph.tools.ray_executor import RayExecutor
    from accelopt_graph.tools.sandbox import SandboxJob

    pinned = RayExecutor(resource="neuron_cores")  # joins the running instance
    code = ("import os\nimport numpy as np\ndef kernel(a):\n"
            "    return np.array([int(os.environ['NEURON_RT_VISIBLE_CORES'])])\n")
    job = SandboxJob(code=code, cases=[[np.zeros(1, np.float32)]], engine="python")
    runs = [pinned.run(job) for _ in range(3)]
    assert all(r.status == "ok" for r in runs), runs[0].error
    assert {int(r.cases[0].outputs[0][0]) for r in runs} <= {0, 1}
    assert {r.details["NEURON_RT_VISIBLE_CORES"] for r in runs} <= {"0", "1"}
