"""One evaluation, end to end, for any sandboxed backend (algorithm.md, "Correctness and timing").

The trusted side builds the cases and computes the references; the executor runs the kernel in a
sandbox; the trusted side checks every case, then asks the backend's `measure` for latency and
counters from what it observed (the simulator's trace, or the device's profile), and rejects a
latency below the task's physical peak. Backends differ only in the engine and in `measure`.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from accelopt_graph.tools.backend import EvalResult, EvalSettings, EvalStatus, KernelTask, Source, normalized_code_hash
from accelopt_graph.tools.checks import below_peak, check_case, forbidden_dtype_use, trace_inconsistency
from accelopt_graph.tools.kernel_policy import check_kernel_source
from accelopt_graph.tools.pool import Executor
from accelopt_graph.tools.sandbox import CaseRun, SandboxJob, SandboxLimits, SandboxRun

_RUN_STATUS = {"compile_error": EvalStatus.COMPILE_ERROR, "runtime_error": EvalStatus.RUNTIME_ERROR,
               "timeout": EvalStatus.TIMEOUT, "sandbox_error": EvalStatus.RUNTIME_ERROR}


@dataclass(frozen=True)
class Measurement:
    """Latency and counters as the trusted side computed them."""

    latency_ms: float
    latency_stats: dict[str, float] = field(default_factory=dict)
    counters: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


class MeasurementError(RuntimeError):
    """The trusted side could not time or profile a kernel that ran correctly (bench_error)."""


# (the sandbox run, index of the timed case, hardware) -> Measurement, computed on the trusted side
Measure = Callable[[SandboxRun, int, str], Measurement]


@dataclass(frozen=True, kw_only=True)
class Plan:
    """Which (seed, case) pairs to run, and which one is timed."""

    pairs: tuple[tuple[int, str | None], ...]
    timed: int


def plan_cases(task: KernelTask, seeds: Sequence[int]) -> Plan:
    """Keep the task's check cases whose seed is configured, plus every adversarial case.

    The timed case is the task's bench seed when configured, else the last plain seed (the
    paper benchmarks on the last seed's inputs).
    """
    pairs = tuple((s, c) for s, c in task.check_cases() if c is not None or s in seeds)
    plain = [i for i, (s, c) in enumerate(pairs) if c is None]
    if not plain:
        raise ValueError(f"task {task.name!r}: none of the configured seeds {list(seeds)} is among "
                         f"its check cases {list(task.check_cases())}")
    bench = getattr(task, "bench_seed", None)
    timed = next((i for i in plain if pairs[i][0] == bench), plain[-1])
    return Plan(pairs=pairs, timed=timed)


def output_limit_mb(task: KernelTask, n_cases: int, settings: EvalSettings) -> int:
    """The sandbox's cap on what the kernel's process writes: the configured one, raised to fit the
    task's own outputs on every case (8 bytes per element, room for a float64 result, plus 64 MiB
    for the trace and logs). A fixed cap refused tasks with large outputs: bmm's 1 GiB output,
    times five seeds, never fitted the default 1 GiB."""
    shapes = getattr(task, "kernel_output_shapes", None)
    shapes = shapes() if callable(shapes) else shapes
    if not shapes:
        return settings.output_limit_mb
    per_case = sum(8 * math.prod(shape) for shape in shapes.values())
    return max(settings.output_limit_mb, math.ceil(n_cases * per_case / 2**20) + 64)


def _label(seed: int, case: str | None) -> str:
    return f"seed {seed}" + (f" (adversarial case {case!r})" if case else "")


def _static_verdict(code: str, *, policy: bool) -> tuple[EvalStatus, str, str] | None:
    """(status, error, flag) for code that must not reach a sandbox, or None."""
    if not code or not code.strip():
        return EvalStatus.NO_CODE, "no kernel code was produced", ""
    try:
        compile(code, "kernel.py", "exec")
    except (SyntaxError, ValueError) as exc:
        return EvalStatus.COMPILE_ERROR, f"kernel.py: {type(exc).__name__}: {exc}", ""
    if policy and (violation := check_kernel_source(code)):
        return EvalStatus.REJECTED, violation.message(), "sandbox_policy"
    return None


def _trace_verdict(task: KernelTask, case_run: CaseRun) -> tuple[EvalStatus, str, str] | None:
    """(status, error, flag) when the timed case's trace breaks a rule, or None."""
    if case_run.trace is None:
        return None
    forbidden = list(getattr(task, "forbidden_dtypes", ()))
    if bad := forbidden_dtype_use(case_run.trace, forbidden):
        return EvalStatus.INCORRECT, f"precision rule: {bad}; this task forbids {forbidden}", ""
    if bad := trace_inconsistency(case_run.trace, case_run.outputs):
        return EvalStatus.REJECTED, bad, "trace_tampering"
    return None


def evaluate_candidate(task: KernelTask, code: str, settings: EvalSettings, *, executor: Executor,
                       engine: str, measure: Measure | None, backend: str, source: Source,
                       policy: bool = True, confinement: str = "strict",
                       env: dict[str, str] | None = None, observe: str | None = None,
                       observe_args: dict[str, Any] | None = None) -> EvalResult:
    """Compile, check on every case, time and profile `code` for `task`; never raises on bad code.

    `measure=None` stops after the correctness checks (a functional pre-check).
    """
    start = time.perf_counter()
    base: dict[str, Any] = {"backend": backend, "source": source, "hardware": settings.hardware,
                            "code_hash": normalized_code_hash(code) if code else ""}

    def result(status: EvalStatus, **fields: Any) -> EvalResult:
        return EvalResult(status=status, wall_s=round(time.perf_counter() - start, 4),
                          **{**base, **fields})

    if verdict := _static_verdict(code, policy=policy):
        status, error, flag = verdict
        return result(status, error=error, flag=flag)
    plan = plan_cases(task, settings.seeds)
    inputs = [task.kernel_inputs(s, c) for s, c in plan.pairs]
    limits = SandboxLimits(timeout_s=settings.timeout_s, confinement=confinement,
                           memory_limit_mb=settings.memory_limit_mb,
                           output_limit_mb=output_limit_mb(task, len(plan.pairs), settings))
    run = executor.run(SandboxJob(
        code=code, cases=inputs, engine=engine, trace_cases=frozenset({plan.timed}), limits=limits,
        env={"ACCELOPT_HARDWARE": settings.hardware, **(env or {})}, observe=observe,
        observe_args=dict(observe_args or {})))
    base.update(seeds=tuple(dict.fromkeys(s for s, _ in plan.pairs)), details=_run_details(run))
    if run.status != "ok":
        failed = len(run.cases) - 1 if run.cases else 0
        label = _label(*plan.pairs[failed]) + ": " if run.cases and run.status != "timeout" else ""
        return result(_RUN_STATUS[run.status], error=label + run.error)
    worst = 0.0
    for (seed, case), sent, case_run in zip(plan.pairs, inputs, run.cases):
        checked = check_case(outputs=case_run.outputs, reference=task.reference_outputs(seed, case),
                             inputs_sent=sent, input_digests=case_run.input_digests,
                             rtol=task.rtol, label=_label(seed, case))
        if not checked.ok:
            return result(EvalStatus.INCORRECT, error=checked.error, rel_l2=checked.rel_l2)
        worst = max(worst, checked.rel_l2 or 0.0)
    if verdict := _trace_verdict(task, run.cases[plan.timed]):
        status, error, flag = verdict
        return result(status, error=error, flag=flag, rel_l2=worst)
    if measure is None:
        return result(EvalStatus.OK, rel_l2=worst, details={**base["details"], "check_only": True})
    try:
        m = measure(run, plan.timed, settings.hardware)
    except MeasurementError as exc:
        return result(EvalStatus.BENCH_ERROR, rel_l2=worst, error=str(exc))
    peak_ms = task.peak_latency_ms(settings.hardware)
    timing = {"latency_ms": m.latency_ms, "latency_stats": m.latency_stats,
              "counters": m.counters, "peak_latency_ms": peak_ms, "rel_l2": worst}
    details = {**base["details"], **m.details, "timed_case": _label(*plan.pairs[plan.timed])}
    if why := below_peak(m.latency_ms, peak_ms):
        return result(EvalStatus.REJECTED, error=why, flag="below_peak",
                      details={**details, "claimed_latency_ms": m.latency_ms},
                      **{**timing, "latency_ms": None})
    percent = 100.0 * peak_ms / m.latency_ms if peak_ms else None
    return result(EvalStatus.OK, percent_of_peak=percent, details=details, **timing)


def _run_details(run: SandboxRun) -> dict[str, Any]:
    return {"sandbox": {**run.details, "wall_s": round(run.wall_s, 4)}}
