"""The sandbox process on its own (python engine): limits, confinement, data-only results."""
import os
import time

import numpy as np
import pytest
from accelopt_graph.tools import confine
from accelopt_graph.tools.sandbox import SandboxJob, SandboxLimits, run_isolated

X = np.arange(12, dtype=np.float32).reshape(3, 4)


def run(code, *, cases=((X, X),), **limits):
    limits.setdefault("timeout_s", 20)
    return run_isolated(SandboxJob(code=code, cases=cases, engine="python",
                                   limits=SandboxLimits(**limits)))


def test_runs_every_case_and_returns_outputs_and_inputs():
    r = run("def kernel(a, b):\n    return a + b\n", cases=((X, X), (X, 2 * X)))
    assert r.status == "ok", r.error
    assert [c.outputs[0][1, 1] for c in r.cases] == [10.0, 15.0]
    from accelopt_graph.tools.sandbox_child import array_digest

    assert r.cases[1].input_digests == (array_digest(X), array_digest(2 * X))


def test_scalar_inputs_arrive_as_python_numbers():
    r = run("def kernel(a, eps):\n    assert isinstance(eps, float)\n    return a * eps\n",
            cases=((X, 0.5),))
    assert r.status == "ok", r.error
    assert r.cases[0].outputs[0][0, 2] == 1.0


def test_exception_becomes_runtime_error_with_kernel_frames_only():
    r = run("def kernel(a, b):\n    raise ValueError('boom')\n")
    assert r.status == "runtime_error"
    assert "ValueError: boom" in r.error and "sandbox_child" not in r.error


def test_crash_is_a_runtime_error_naming_the_signal():
    r = run("import ctypes\ndef kernel(a, b):\n    return ctypes.string_at(0)\n")
    assert r.status == "runtime_error" and "SIGSEGV" in r.error


def test_missing_kernel_function_is_reported():
    r = run("def other(a, b):\n    return a\n")
    assert r.status == "runtime_error" and "no function named 'kernel'" in r.error


def test_hang_is_killed_at_the_wall_clock_timeout():
    start = time.perf_counter()
    r = run("def kernel(a, b):\n    while True:\n        pass\n", timeout_s=1.0)
    assert r.status == "timeout"
    assert time.perf_counter() - start < 5


def test_unbounded_allocation_hits_the_memory_limit():
    code = ("import numpy as np\nkeep = []\ndef kernel(a, b):\n"
            "    while True:\n        keep.append(np.ones(1 << 27))\n")
    r = run(code, memory_limit_mb=1024)
    assert r.status == "runtime_error"
    assert "MemoryError" in r.error or "killed" in r.error


def test_oversized_output_is_refused():
    code = "import numpy as np\ndef kernel(a, b):\n    return np.ones((1 << 20,), np.float64)\n"
    r = run(code, output_limit_mb=2)
    assert r.status == "runtime_error" and "output limit is 2 MiB" in r.error


def test_reference_style_secret_file_is_unreadable(tmp_path):
    if confine.landlock_abi() < 1:
        pytest.skip("Landlock unavailable: file confinement is off on this kernel")
    secret = tmp_path / "reference_seed21.npy"
    np.save(secret, X)
    r = run(f"import numpy as np\ndef kernel(a, b):\n    return np.load({str(secret)!r})\n")
    assert r.status == "runtime_error" and "Permission denied" in r.error
    assert r.details["confinement"]["landlock"].startswith("on")


def test_fork_exec_socket_and_signals_are_denied():
    code = ("import os, socket\ndef kernel(a, b):\n    errors = []\n"
            "    for attempt in (os.fork, lambda: os.execv('/bin/true', ['true']),\n"
            "                    lambda: socket.socket(), lambda: os.kill(os.getppid(), 0)):\n"
            "        try:\n            attempt()\n            errors.append('allowed')\n"
            "        except OSError as e:\n            errors.append(e.errno)\n"
            "    raise RuntimeError(str(errors))\n")
    r = run(code)
    if r.details["confinement"]["seccomp"] != "on":
        pytest.skip(f"seccomp unavailable here: {r.details['confinement']['seccomp']}")
    assert "RuntimeError: [1, 1, 1, 1]" in r.error


@pytest.mark.parametrize("start", ["spawn", "fork_server"])
def test_no_process_outlives_its_evaluation(start):
    code = ("import os, time, numpy as np\ndef kernel(a, b):\n    pid = os.fork()\n"
            "    if pid == 0:\n        os.setsid()\n        time.sleep(60)\n        os._exit(0)\n"
            "    return np.array([pid])\n")
    r = run_isolated(SandboxJob(code=code, cases=((X, X),), engine="python", start=start,
                                limits=SandboxLimits(timeout_s=20, confinement="none")))
    assert r.status == "ok", r.error
    stray = int(r.cases[0].outputs[0][0])
    deadline = time.time() + 3
    while os.path.exists(f"/proc/{stray}") and time.time() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{stray}")


def test_fork_server_and_spawn_give_the_same_outputs():
    runs = [run_isolated(SandboxJob(code="def kernel(a, b):\n    return a * b\n", cases=((X, X),),
                                    engine="python", start=start)) for start in ("spawn", "fork_server")]
    assert [r.status for r in runs] == ["ok", "ok"]
    assert runs[0].cases[0].outputs[0].tobytes() == runs[1].cases[0].outputs[0].tobytes()
    assert runs[0].details["confinement"] == runs[1].details["confinement"]


def test_seccomp_program_is_well_formed_for_each_architecture():
    for machine in ("x86_64", "aarch64"):
        prog = confine.seccomp_program(machine)
        assert all(len(ins) == 8 for ins in prog)
        assert len(prog) < 64


def test_many_concurrent_launches_all_complete():
    from concurrent.futures import ThreadPoolExecutor

    job = SandboxJob(code="def kernel(a, b):\n    return a - b\n", cases=((X, X),), engine="python",
                     start="fork_server", limits=SandboxLimits(timeout_s=60))
    with ThreadPoolExecutor(max_workers=12) as pool:
        runs = list(pool.map(lambda _: run_isolated(job), range(24)))
    assert [r.status for r in runs] == ["ok"] * 24


def test_machinery_failure_raises_instead_of_blaming_the_kernel():
    from accelopt_graph.tools.sandbox import SandboxFailure

    with pytest.raises(SandboxFailure, match="'no_such_engine' engine failed before loading the kernel"):
        run_isolated(SandboxJob(code="def kernel(a, b):\n    return a\n", cases=((X, X),),
                                engine="no_such_engine", limits=SandboxLimits(timeout_s=20)))
