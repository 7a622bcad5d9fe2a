"""The NKIBench runner: evaluate one kernel per task on a backend and score it against the peak.

Each task's kernel (its baseline, or a file from a kernel directory) goes through the backend's
`evaluate`, i.e. the sandbox, the shared correctness rule and the backend's timing. A failing
task becomes a row with its status and error; the bench itself never stops on one task.
By default the bench checks correctness on the task's bench seed only, at the given sizes (full
size unless `params` reduce them); `full_check=True` runs the whole protocol (every seed and
adversarial case), which the test suite does at reduced sizes for every baseline.
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from accelopt_graph.nkibench.peak import geomean
from accelopt_graph.nkibench.task import Case, Task
from accelopt_graph.tools.backend import EvalResult, EvalSettings, EvalStatus, KernelBackend


class BenchRow(BaseModel):
    """One task's result in the bench table (and JSON)."""

    model_config = ConfigDict(extra="forbid")

    task: str
    status: str
    latency_ms: float | None = None
    source: str = ""  # "simulator" (estimated) or "hardware" (measured)
    bound: str
    peak_latency_ms: float
    fraction_of_peak: float | None = None
    rel_l2: float | None = None
    error: str = ""
    kernel: str = ""
    parameters: dict[str, int] = Field(default_factory=dict)
    wall_s: float = 0.0
    counters: dict[str, float] = Field(default_factory=dict)


class BenchReport(BaseModel):
    """All rows of one bench run and the geometric mean of their fractions of peak."""

    model_config = ConfigDict(extra="forbid")

    backend: str
    hardware: str
    checked: str
    rows: list[BenchRow]
    geomean_fraction_of_peak: float | None = None  # over the rows with status ok
    tasks_ok: int = 0
    wall_s: float = 0.0

    @property
    def complete(self) -> bool:
        return self.tasks_ok == len(self.rows)


class _BenchCases:
    """A task seen through the bench: the same task with a chosen subset of its check cases."""

    def __init__(self, task: Task, cases: Sequence[tuple[int, Case]]):
        self._task = task
        self._cases = list(cases)

    def __getattr__(self, name: str):
        return getattr(self._task, name)

    def check_cases(self, seeds: Sequence[int] | None = None) -> list[tuple[int, Case]]:
        return list(self._cases)


def kernel_sources(tasks: Sequence[Task], kernels_dir: Path | None) -> dict[str, tuple[str, str | None]]:
    """Map task name -> (kernel path, source): the baseline, or `<kernels_dir>/<task>.py`."""
    sources: dict[str, tuple[str, str | None]] = {}
    for task in tasks:
        path = task.baseline_path if kernels_dir is None else Path(kernels_dir) / f"{task.name}.py"
        sources[task.name] = (str(path), path.read_text() if path.is_file() else None)
    return sources


def bench_task(task: Task, code: str | None, *, backend: KernelBackend, settings: EvalSettings,
               kernel: str = "", full_check: bool = False) -> BenchRow:
    """Evaluate one kernel on one task; every failure becomes a row, never an exception."""
    peak = task.peak(settings.hardware)
    row = dict(task=task.name, bound=peak.bound, peak_latency_ms=peak.latency_ms, kernel=kernel,
               parameters=dict(task.parameters))
    start = time.perf_counter()
    if code is None:
        return BenchRow(status=EvalStatus.NO_CODE.value, error=f"kernel file {kernel} not found", **row)
    cases = task.check_cases() if full_check else [(task.bench_seed, None)]
    seeds = tuple(dict.fromkeys(s for s, c in cases if c is None))
    # The oracle runs here while the sandbox runs the kernel (it waits on a child process), so the
    # evaluation finds the references cached; a failure here resurfaces in the evaluation itself.
    prefetch = threading.Thread(target=_prefetch_references, args=(task, cases), daemon=True)
    prefetch.start()
    try:
        result: EvalResult = backend.evaluate(_BenchCases(task, cases), code,
                                              settings.model_copy(update={"seeds": seeds}))
    except Exception as exc:  # a bug in a backend must not take the whole bench down
        return BenchRow(status=EvalStatus.BENCH_ERROR.value, error=f"{type(exc).__name__}: {exc}",
                        wall_s=time.perf_counter() - start, **row)
    finally:
        prefetch.join()
    fraction = peak.latency_ms / result.latency_ms if result.is_correct and result.latency_ms else None
    return BenchRow(status=result.status.value, latency_ms=result.latency_ms, source=result.source,
                    fraction_of_peak=fraction, rel_l2=result.rel_l2, error=result.error,
                    counters=dict(result.counters), wall_s=time.perf_counter() - start, **row)


def _prefetch_references(task: Task, cases: Sequence[tuple[int, Case]]) -> None:
    for seed, case in cases:
        try:
            task.reference_outputs(seed, case)
        except Exception:  # noqa: BLE001 - reported by the evaluation, which computes it again
            return


def run_bench(tasks: Sequence[Task], *, backend: KernelBackend, settings: EvalSettings,
              kernels_dir: Path | None = None, full_check: bool = False, workers: int = 1,
              on_row: Callable[[BenchRow], None] | None = None) -> BenchReport:
    """Evaluate every task's kernel and aggregate the geometric mean of the fractions of peak."""
    start = time.perf_counter()
    sources = kernel_sources(tasks, kernels_dir)
    rows: dict[str, BenchRow] = {}

    def one(task: Task) -> BenchRow:
        path, code = sources[task.name]
        return bench_task(task, code, backend=backend, settings=settings, kernel=path, full_check=full_check)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {pool.submit(one, t): t.name for t in tasks}
        for fut in as_completed(futures):
            row = fut.result()
            rows[row.task] = row
            if on_row is not None:
                on_row(row)
    ordered = [rows[t.name] for t in tasks]
    fractions = [r.fraction_of_peak for r in ordered if r.fraction_of_peak]
    checked = ("every seed and adversarial case" if full_check else "the bench seed of each task") + \
        (" at full size" if all(t.parameters == t.spec.parameters for t in tasks) else " at reduced sizes")
    return BenchReport(backend=getattr(backend, "name", type(backend).__name__), hardware=settings.hardware,
                       checked=checked, rows=ordered, tasks_ok=len(fractions),
                       geomean_fraction_of_peak=geomean(fractions) if fractions else None,
                       wall_s=time.perf_counter() - start)

