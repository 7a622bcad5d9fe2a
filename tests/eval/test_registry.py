"""make_backend assembles backends by name; both satisfy the KernelBackend protocol."""
import pytest
from accelopt_graph.tools.backend import EvalSettings, EvalStatus, KernelBackend
from accelopt_graph.tools.registry import BACKENDS, make_backend
from eval_tasks import AddTask


def test_nkisim_backend_with_cpu_worker_slots():
    backend = make_backend("nkisim", workers=3)
    assert isinstance(backend, KernelBackend) and backend.name == "nkisim"
    assert backend.executor.slots.size == 3
    assert backend.hardware_info("trn1")["source"] == "simulator"


def test_neuron_backend_pins_the_requested_cores_and_degrades_without_sdk(monkeypatch):
    from accelopt_graph.tools import neuron

    backend = make_backend("neuron", neuron_cores=[2, 3])
    assert isinstance(backend, KernelBackend)
    assert backend.executor.slots.slots == ("2", "3")
    assert backend.executor.slots.env_var == "NEURON_RT_VISIBLE_CORES"
    monkeypatch.setattr(neuron, "missing_sdk", lambda: "neuronxcc not importable")
    r = backend.evaluate(AddTask(), "def kernel(a, b):\n    return a + b\n", EvalSettings())
    assert r.status is EvalStatus.BENCH_ERROR and "pip.repos.neuron.amazonaws.com" in r.error


@pytest.mark.parametrize("kwargs,match", [
    ({"name": "triton"}, "unknown backend 'triton'"),
    ({"name": "nkisim", "executor": "slurm"}, "executor must be 'local' or 'ray'"),
    ({"name": "nkisim", "workers": 0}, "workers must be >= 1"),
])
def test_bad_configuration_is_a_clear_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_backend(**kwargs)


def test_registry_is_a_table():
    assert set(BACKENDS) == {"nkisim", "neuron"}
