"""Run one untrusted kernel in its own confined process and bring back only data (issue 7, sandbox).

`run_isolated(job)` starts the sandbox program (`accelopt_graph.tools.sandbox_child`) in a fresh
temporary directory and a new session, with inputs as .npy files: forked from the pre-warmed
server (tools/fork_server.py) for the simulator, or as a fresh `python -I` otherwise. A wall-clock
timeout kills the whole process group; strays that left the group are killed too (by the fork
server, a subreaper, or by a sweep for this run's token). The child confines itself
(tools/confine.py) before loading the kernel. What comes back is checked data: arrays loaded
without pickle and size-capped, a JSON trace, input digests, the tail of its logs. Correctness,
latency and the verdict are computed by the caller from this data, never by the child.
"""
from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from accelopt_graph.tools.fork_server import FORK_ENGINES, shared_server
from accelopt_graph.tools.nkisim.trace import TraceEvent
from accelopt_graph.tools.trace_wire import TraceFormatError, decode_trace

RunStatus = Literal["ok", "compile_error", "runtime_error", "timeout", "sandbox_error"]
ERROR_TAIL_CHARS = 4000
_TOKEN_VAR = "ACCELOPT_SANDBOX_RUN"
# One thread per sandbox: a device slot is one CPU worker, and OpenBLAS's per-thread buffers
# would otherwise eat the address-space limit.
_THREAD_ENV = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                "NUMEXPR_NUM_THREADS")}


@dataclass(frozen=True, kw_only=True)
class SandboxLimits:
    """Limits on one sandboxed evaluation (all cases of one kernel together)."""

    timeout_s: float = 600.0
    memory_limit_mb: int = 8192
    output_limit_mb: int = 1024
    max_trace_events: int = 5_000_000
    # strict: rlimits + seccomp + Landlock (simulator); toolchain: rlimits without the address-space
    # cap, so a vendor compiler may exec and the runtime may map device memory (neuron); none: tests.
    confinement: Literal["strict", "toolchain", "none"] = "strict"

    def __post_init__(self) -> None:
        if self.timeout_s <= 0 or self.memory_limit_mb <= 0 or self.output_limit_mb <= 0:
            raise ValueError(f"SandboxLimits: limits must be positive, got {self}")


@dataclass(frozen=True, kw_only=True)
class SandboxJob:
    """Everything the sandbox process gets: code and inputs, never reference outputs."""

    code: str
    cases: Sequence[Sequence[Any]]  # inputs per case, in the kernel's argument order
    engine: str = "nkisim"
    kernel_name: str = "kernel"
    trace_cases: frozenset[int] = frozenset()  # cases whose instruction trace comes back
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    env: dict[str, str] = field(default_factory=dict)  # e.g. NEURON_RT_VISIBLE_CORES
    # how the sandbox process starts: a fresh interpreter ("spawn") or a fork of the pre-warmed
    # server (tools/fork_server.py); "auto" forks for the engines the server preloads.
    start: Literal["auto", "spawn", "fork_server"] = "auto"
    # Trusted post-processing on the same machine, before the working directory is deleted:
    # "module:function" called as fn(workdir, job) -> dict (e.g. profiling the device trace).
    observe: str | None = None
    observe_args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class CaseRun:
    """What one case returned: outputs, the inputs as the kernel left them, maybe a trace."""

    status: RunStatus
    error: str = ""
    outputs: tuple[np.ndarray, ...] = ()
    input_digests: tuple[str, ...] = ()  # the kernel's view of its inputs after the run
    trace: tuple[TraceEvent, ...] | None = None


@dataclass(frozen=True, kw_only=True)
class SandboxRun:
    """Outcome of one sandboxed process: a status for the whole run plus per-case data."""

    status: RunStatus
    error: str = ""
    cases: tuple[CaseRun, ...] = ()
    wall_s: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)
    observed: dict[str, Any] = field(default_factory=dict)  # from `job.observe`, trusted side


def _observe(workdir: Path, job: SandboxJob) -> dict[str, Any]:
    module_name, attr = job.observe.split(":")
    return getattr(importlib.import_module(module_name), attr)(workdir, job)


class SandboxFailure(RuntimeError):
    """The evaluation machinery itself failed (not the kernel): raised, never a status."""


def _tail(text: str, limit: int = ERROR_TAIL_CHARS) -> str:
    return text if len(text) <= limit else "..." + text[-limit:]


def _read_tail(path: Path, limit: int = ERROR_TAIL_CHARS) -> str:
    if not path.exists():
        return ""
    with path.open("rb") as f:
        f.seek(max(0, path.stat().st_size - limit))
        return f.read().decode(errors="replace")


def _write_inputs(workdir: Path, cases: Sequence[Sequence[Any]]) -> list[list[dict]]:
    (workdir / "in").mkdir()
    specs = []
    for i, inputs in enumerate(cases):
        row = []
        for j, value in enumerate(inputs):
            name = f"in/c{i}_i{j}.npy"
            scalar = not isinstance(value, np.ndarray)
            np.save(workdir / name, np.asarray(value), allow_pickle=False)
            row.append({"file": name, "scalar": scalar})
        specs.append(row)
    return specs


_SHM_MAX_BYTES = 1 << 30


def _scratch_dir(job: SandboxJob) -> str | None:
    """Use memory-backed /dev/shm for small jobs with room to spare, else the default temp dir.

    tmpfs pages are not reclaimable like the page cache of a disk-backed /tmp, so a full-size
    task (GiBs of inputs and outputs) stays on disk rather than pinning RAM.
    """
    need = 4 * sum(np.asarray(v).nbytes for case in job.cases for v in case) + (64 << 20)
    try:
        st = os.statvfs("/dev/shm")
    except OSError:
        return None
    roomy = st.f_bavail * st.f_frsize > 4 * need
    return "/dev/shm" if need <= _SHM_MAX_BYTES and roomy and os.access("/dev/shm", os.W_OK) else None


def _sweep(token: str) -> int:
    """Kill every process whose environment carries `token`; return how many were killed."""
    needle = f"{_TOKEN_VAR}={token}".encode()
    killed = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
        except (OSError, PermissionError):
            continue
    return killed


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _spawn(workdir: Path, env: dict[str, str], timeout_s: float) -> tuple[int | None, bool]:
    with open(workdir / "stdout.txt", "wb") as so, open(workdir / "stderr.txt", "wb") as se:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-m", "accelopt_graph.tools.sandbox_child", str(workdir)],
            cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=so, stderr=se,
            start_new_session=True)
        try:
            return proc.wait(timeout=timeout_s), False
        except subprocess.TimeoutExpired:
            return None, True
        finally:
            _kill_group(proc)  # the leader is unreaped until wait(): its group id cannot be reused
            proc.wait()


def _fork(workdir: Path, env: dict[str, str], timeout_s: float) -> tuple[int | None, bool]:
    slot = shared_server().launch(env[_TOKEN_VAR], str(workdir), env)
    if slot["exited"].wait(timeout=timeout_s):
        if slot.get("rc") is None:
            raise SandboxFailure("the sandbox fork server exited while a kernel was running")
        return slot["rc"], False
    try:
        os.killpg(slot["pid"], signal.SIGKILL)
    except ProcessLookupError:
        pass
    slot["exited"].wait(timeout=10)
    return None, True


def _load_array(path: Path, budget: list[int]) -> np.ndarray:
    size = path.stat().st_size
    if size > budget[0]:
        raise ValueError(f"{path.name}: {size} bytes exceeds the output limit")
    budget[0] -= size
    return np.load(path, allow_pickle=False)


def _collect(workdir: Path, job: SandboxJob) -> tuple[list[CaseRun], dict]:
    out = workdir / "out"
    report = json.loads((out / "report.json").read_text())
    details = {"confinement": report.get("confinement", {})}
    if "internal" in report:
        raise SandboxFailure(f"the sandbox's {job.engine!r} engine failed before loading the "
                             f"kernel:\n{report['internal']}")
    load = report.get("load")
    if load:  # the kernel file itself failed to load: no case ran
        details["stage"] = "load"
        return [CaseRun(status=load["status"], error=_tail(str(load["error"])))], details
    budget = [job.limits.output_limit_mb << 20]
    cases = []
    for i, entry in enumerate(report["cases"]):
        if entry["status"] != "ok":
            cases.append(CaseRun(status=entry["status"], error=_tail(str(entry["error"]))))
            continue
        outputs = tuple(_load_array(out / f"c{i}_o{j}.npy", budget)
                        for j in range(int(entry["n_outputs"])))
        digests = tuple(str(d) for d in entry["input_digests"])
        if len(digests) != len(job.cases[i]):
            raise ValueError(f"case {i}: {len(digests)} input digests for {len(job.cases[i])} inputs")
        trace = None
        trace_file = out / f"c{i}_trace.json"
        if i in job.trace_cases and trace_file.exists():
            trace = tuple(decode_trace(json.loads(trace_file.read_text()),
                                       max_events=job.limits.max_trace_events))
        cases.append(CaseRun(status="ok", outputs=outputs, input_digests=digests, trace=trace))
    return cases, details


def _child_env(job: SandboxJob, token: str) -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "HOME", "NEURON_RT_ROOT_COMM_ID")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(_THREAD_ENV)
    env.update(job.env)
    env[_TOKEN_VAR] = token
    return env


def run_isolated(job: SandboxJob) -> SandboxRun:
    """Run `job` in a fresh confined process and return what it produced, as checked data."""
    start = time.perf_counter()
    token = uuid.uuid4().hex
    limits = job.limits
    with tempfile.TemporaryDirectory(prefix="accelopt-eval-", dir=_scratch_dir(job)) as tmp:
        workdir = Path(tmp)
        (workdir / "kernel.py").write_text(job.code)
        specs = _write_inputs(workdir, job.cases)
        child_job = {
            "engine": job.engine, "kernel_name": job.kernel_name, "confinement": limits.confinement,
            "cases": [{"inputs": s, "trace": i in job.trace_cases} for i, s in enumerate(specs)],
            "limits": {"memory_limit_mb": limits.memory_limit_mb,
                       "cpu_limit_s": int(limits.timeout_s) + 5,
                       "file_limit_mb": limits.output_limit_mb},
        }
        (workdir / "job.json").write_text(json.dumps(child_job))
        launch = _fork if job.start == "fork_server" or (
            job.start == "auto" and job.engine in FORK_ENGINES) else _spawn
        try:
            returncode, timed_out = launch(workdir, _child_env(job, token), limits.timeout_s)
        finally:
            # Spawned children keep their exec-time environment, so the token finds strays that
            # left the group; forked ones are reaped by the fork server (a subreaper) instead.
            swept = _sweep(token) if launch is _spawn else 0
        wall_s = time.perf_counter() - start
        stderr = _read_tail(workdir / "stderr.txt")
        details: dict[str, Any] = {"stray_processes_killed": swept} if swept else {}
        if timed_out:
            return SandboxRun(status="timeout", wall_s=wall_s, details=details,
                              error=f"timed out after {limits.timeout_s:g} s (process group killed)"
                                    + (f"\n{stderr}" if stderr else ""))
        if returncode != 0 or not (workdir / "out" / "report.json").exists():
            return SandboxRun(status="runtime_error", wall_s=wall_s, details=details,
                              error=_tail(_describe_exit(returncode) + "\n" + stderr))
        try:
            cases, collected = _collect(workdir, job)
        except (OSError, ValueError, KeyError, TypeError, TraceFormatError) as exc:
            return SandboxRun(status="sandbox_error", wall_s=wall_s, details=details,
                              error=f"sandbox output rejected: {exc}")
        failed = next((c for c in cases if c.status != "ok"), None)
        observed = _observe(workdir, job) if job.observe and not failed else {}
    details.update(collected)
    ran = () if collected.get("stage") == "load" else tuple(cases)
    return SandboxRun(status=failed.status if failed else "ok", error=failed.error if failed else "",
                      cases=ran, wall_s=wall_s, details=details, observed=observed)


def _describe_exit(returncode: int) -> str:
    if returncode < 0:
        name = signal.Signals(-returncode).name
        hint = {"SIGKILL": " (killed: out of memory or CPU limit?)",
                "SIGXCPU": " (CPU time limit)", "SIGXFSZ": " (output size limit)",
                "SIGSEGV": " (crash; often memory exhausted)"}.get(name, "")
        return f"kernel process died with {name}{hint}"
    return f"kernel process exited with code {returncode}"
