"""The hardening suite: every attack kernel under adversarial/ gets the right status, in one run.

All kernels are evaluated concurrently through one SimBackend (2 workers), as the graph's fan-out
would; the run finishes and the honest controls still pass. With the static policy on, kernels that
reach for the OS or our packages are rejected before running; with it off, the OS confinement and
the trusted-side checks must catch the same attacks (defence in depth, tested layer by layer).
"""
import platform
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from accelopt_graph.tools import confine
from accelopt_graph.tools.backend import EvalSettings, EvalStatus
from accelopt_graph.tools.sim_backend import SimBackend
from eval_tasks import SoftmaxTask

nkibench = pytest.importorskip("accelopt_graph.nkibench")
ATTACKS = Path(__file__).parent / "adversarial"
S = EvalStatus
SETTINGS = EvalSettings(seeds=(0, 21), timeout_s=60, memory_limit_mb=1024)
SHORT = EvalSettings(seeds=(0, 21), timeout_s=3)

# file -> (task, expected status with the policy on, expected status with it off or None)
EXPECTED = {
    "honest_silu.py": ("silu", S.OK, S.OK),
    "softmax_honest.py": ("softmax", S.OK, None),
    "returns_input.py": ("silu", S.INCORRECT, None),
    "returns_constant.py": ("silu", S.INCORRECT, None),
    "cached_result.py": ("silu", S.INCORRECT, None),
    "partial_write.py": ("silu", S.INCORRECT, None),
    "mutates_input.py": ("silu", S.COMPILE_ERROR, None),
    "softmax_no_max.py": ("softmax", S.INCORRECT, None),
    "never_returns.py": ("silu", S.TIMEOUT, None),
    "allocates_unbounded.py": ("silu", S.RUNTIME_ERROR, None),
    "reads_parent_memory.py": ("silu", S.REJECTED, S.RUNTIME_ERROR),
    "reads_other_outputs.py": ("silu", S.REJECTED, S.RUNTIME_ERROR),
    "patches_perf_model.py": ("silu", S.REJECTED, S.OK),
    "hides_trace.py": ("silu", S.REJECTED, S.REJECTED),
    "below_peak_claim.py": ("silu", S.REJECTED, S.REJECTED),
    "edits_trace_via_nl.py": ("silu", S.REJECTED, S.REJECTED),
    "forks.py": ("silu", S.REJECTED, S.RUNTIME_ERROR),
    "affine_carried_dependency.py": ("silu", S.COMPILE_ERROR, S.COMPILE_ERROR),
}


@pytest.fixture(scope="module")
def tasks():
    return {"silu": nkibench.load_task("silu", reduced=True), "softmax": SoftmaxTask()}


def run_suite(tasks, names, *, policy):
    backend = SimBackend(workers=2, policy=policy)

    def one(name):
        settings = SHORT if name == "never_returns.py" else SETTINGS
        return name, backend.evaluate(tasks[EXPECTED[name][0]], (ATTACKS / name).read_text(), settings)

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(one, names))


def test_every_attack_file_is_in_the_table():
    assert sorted(p.name for p in ATTACKS.glob("*.py")) == sorted(EXPECTED)


def test_attacks_with_the_policy_on(tasks):
    start = time.perf_counter()
    results = run_suite(tasks, list(EXPECTED), policy=True)
    got = {name: r.status for name, r in results.items()}
    assert got == {name: exp[1] for name, exp in EXPECTED.items()}
    assert time.perf_counter() - start < 120
    flagged = {n for n, r in results.items() if r.flag}
    assert flagged == {n for n, exp in EXPECTED.items() if exp[1] is S.REJECTED}
    assert "large" in results["softmax_no_max.py"].error
    assert "NaN" in results["partial_write.py"].error
    assert "seed 21" in results["cached_result.py"].error
    assert "immutable" in results["mutates_input.py"].error
    hoard = results["allocates_unbounded.py"].error
    assert "MemoryError" in hoard and "memory limit is 1024 MiB" in hoard


def test_attacks_with_the_policy_off_are_caught_by_confinement_and_trusted_checks(tasks):
    if confine.landlock_abi() < 1:
        pytest.skip("Landlock unavailable: file-system confinement cannot be tested here")
    if platform.machine() not in confine._SYSCALLS:
        pytest.skip(f"no seccomp syscall table for {platform.machine()}")
    names = [n for n, exp in EXPECTED.items() if exp[2] is not None]
    results = run_suite(tasks, names, policy=False)
    assert {n: r.status for n, r in results.items()} == {n: EXPECTED[n][2] for n in names}
    honest = results["honest_silu.py"]
    # the patch ran in the sandbox only: the parent's performance model gave the honest latency
    assert results["patches_perf_model.py"].latency_ms == honest.latency_ms
    assert results["hides_trace.py"].flag == "trace_tampering"
    assert results["edits_trace_via_nl.py"].flag == "trace_tampering"
    assert "before any instruction wrote it" in results["edits_trace_via_nl.py"].error
    below = results["below_peak_claim.py"]
    assert below.flag == "below_peak" and below.details["claimed_latency_ms"] < below.peak_latency_ms
    assert "Operation not permitted" in results["forks.py"].error
    assert "Permission denied" in results["reads_parent_memory.py"].error
