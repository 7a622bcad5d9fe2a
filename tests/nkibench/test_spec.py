"""Task files are validated: a malformed one is rejected with a message naming file and field."""
import shutil

import numpy as np
import pytest
import yaml

from accelopt_graph.nkibench import TaskSpecError, list_tasks, load_task
from accelopt_graph.nkibench.task import TASKS_DIR


def _copy_task(tmp_path, name="silu"):
    shutil.copytree(TASKS_DIR / name, tmp_path / name)
    return tmp_path / name / "task.yaml"


def _edit(path, change):
    raw = yaml.safe_load(path.read_text())
    change(raw)
    path.write_text(yaml.safe_dump(raw))


@pytest.mark.parametrize("change, field", [
    (lambda r: r["check"].pop("rtol"), "check.rtol"),
    (lambda r: r["check"].update(rtol="tight"), "check.rtol"),
    (lambda r: r.update(parameters={"M": "big", "N": 7}), "parameters.M"),
    (lambda r: r["inputs"][0].update(shape=["M", "Q"]), "inputs[0].shape"),
    (lambda r: r["layout"]["inputs"]["x"].update(kernel_shape=[128, "M // 64", "N"]), "layout.inputs.x.kernel_shape"),
    (lambda r: r["peak"]["bytes"].update(value=1), "peak.bytes.value"),
    (lambda r: r.update(colour="blue"), "colour"),
    (lambda r: r["adversarial"][0].pop("init"), "adversarial.0"),
])
def test_malformed_task_names_file_and_field(tmp_path, change, field):
    path = _copy_task(tmp_path)
    _edit(path, change)
    with pytest.raises(TaskSpecError) as info:
        load_task("silu", task_dir=tmp_path)
    msg = str(info.value)
    assert str(path) in msg and field in msg, msg


def test_bad_yaml_and_missing_reference(tmp_path):
    path = _copy_task(tmp_path)
    path.write_text("name: [unclosed")
    with pytest.raises(TaskSpecError, match="not valid YAML"):
        load_task("silu", task_dir=tmp_path)
    path2 = _copy_task(tmp_path / "b")
    (path2.parent / "reference.py").unlink()
    task = load_task("silu", task_dir=tmp_path / "b", reduced=True)
    with pytest.raises(TaskSpecError, match="reference.py"):
        task.reference_outputs(0)


def test_unknown_task_and_parameter_are_named():
    with pytest.raises(KeyError, match="nosuch"):
        load_task("nosuch")
    with pytest.raises(TaskSpecError, match="Z"):
        load_task("silu", params={"Z": 3})
    with pytest.raises(TaskSpecError, match="kernel_shape"):
        load_task("silu", params={"M": 100})  # 100 rows do not split over 128 partitions


def test_user_task_dir_is_listed(tmp_path):
    _copy_task(tmp_path)
    assert list_tasks(tmp_path) == ["silu"]


def test_inputs_are_seeded_read_only_and_in_kernel_layout():
    task = load_task("matmul", params={"M": 256, "N": 512, "K": 256})
    a, b = task.kernel_inputs(0)
    assert a.shape == (2, 128, 2, 128) and b.shape == (2, 128, 512) and a.dtype == np.float32
    assert not a.flags.writeable
    again = load_task("matmul", params={"M": 256, "N": 512, "K": 256}).kernel_inputs(0)[0]
    assert np.array_equal(a, again)
    assert not np.array_equal(a, task.kernel_inputs(21)[0])
    lhs, rhs = task.numpy_inputs(0)
    ref = task.reference_outputs(0)[0]
    assert np.allclose(ref.reshape(256, 512), lhs @ rhs, rtol=1e-4, atol=1e-3)
    assert np.array_equal(a.reshape(256, 256), lhs)


def test_task_pickles_with_its_parameters():
    import pickle

    task = load_task("gqa_full", reduced=True)
    task.reference_outputs(0)  # imports the reference module, which must not block pickling
    clone = pickle.loads(pickle.dumps(task))
    assert clone.parameters == task.parameters and clone.name == "gqa_full"
    assert np.array_equal(clone.reference_outputs(0)[0], task.reference_outputs(0)[0])


def test_cache_computes_a_key_once_across_threads_and_respects_its_bound():
    import threading
    import time

    from accelopt_graph.nkibench.cache import ArrayCache

    cache = ArrayCache(max_bytes=1000)
    calls = []

    def compute():
        calls.append(1)
        time.sleep(0.05)
        return [np.zeros(10, np.float32)]

    threads = [threading.Thread(target=cache.get_or_compute, args=("k", compute)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and cache.nbytes == 40
    (value,) = cache.get_or_compute("k", compute)
    assert not value.flags.writeable
    cache.get_or_compute("big", lambda: [np.zeros(1000, np.float32)])  # 4000 bytes: never cached
    assert cache.nbytes == 40
    for i in range(30):  # 30 x 40 bytes: the oldest entries are evicted
        cache.get_or_compute(i, lambda: [np.zeros(10, np.float32)])
    assert cache.nbytes <= 1000
