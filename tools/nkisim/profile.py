"""`profile_kernel`: run a kernel in the simulator and time it with the performance model.

The one call the evaluation service and the CLI need: outputs plus a `Profile` whose counters carry
neuron-profile's field names. Every number is an estimate: `source` is always "simulator".
"""
from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from accelopt_graph.tools.nkisim.counters import compute_counters, planner_counters
from accelopt_graph.tools.nkisim.hardware import HardwareSpec, get_spec
from accelopt_graph.tools.nkisim.perf_model import LatencyBreakdown, estimate_latency
from accelopt_graph.tools.nkisim.timeline import write_chrome_trace
from accelopt_graph.tools.nkisim.trace import TraceEvent


class DmaProfile(BaseModel):
    """DMA statistics of one run (neuron-profile's dma_* fields, plus per-kind splits)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    transfers: int
    total_bytes: int
    average_bytes: float
    descriptors: int
    bytes_by_kind: dict[str, int] = Field(default_factory=dict)  # load, store, spill_save, ...
    count_by_kind: dict[str, int] = Field(default_factory=dict)
    queue_busy_ms: dict[str, float] = Field(default_factory=dict)
    engines_busy_ms: float = 0.0  # summed over the DMA engines
    hbm_busy_ms: float = 0.0
    hbm_utilization: float = 0.0  # HBM busy / latency, a fraction


class HotLine(BaseModel):
    """Busy time spent on one kernel source line and op, on one engine (or on the DMA queues)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    line: int
    op: str
    engine: str  # tensor | vector | scalar | gpsimd | dma
    instructions: int
    busy_ms: float
    share: float  # of that engine's (or the DMA queues') total busy time, a fraction


def hot_lines(breakdown: LatencyBreakdown, *, top: int = 8) -> list[HotLine]:
    """The source lines that keep each engine busiest, largest first."""
    busy: dict[tuple[int, str, str], list[float]] = {}
    totals: dict[str, float] = {}
    for s in breakdown.slices:
        engine = "dma" if s.track.startswith("dma_q") else s.track
        acc = busy.setdefault((s.line, s.name, engine), [0, 0.0])
        acc[0] += 1
        acc[1] += s.busy_s
        totals[engine] = totals.get(engine, 0.0) + s.busy_s
    ranked = sorted(busy.items(), key=lambda kv: (-kv[1][1], kv[0]))[:top]
    return [HotLine(line=line, op=op, engine=engine, instructions=int(n), busy_ms=b * 1e3,
                    share=b / totals[engine] if totals[engine] else 0.0)
            for (line, op, engine), (n, b) in ranked]


class Profile(BaseModel):
    """Estimated latency and counters of one simulated kernel run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: Literal["simulator"] = "simulator"
    hardware: str
    cost_model_version: str
    latency_ms: float
    counters: dict[str, float]
    engine_busy_ms: dict[str, float]
    engine_active_ms: dict[str, float]
    engine_instructions: dict[str, int]
    dma: DmaProfile
    bottleneck: str
    peak_sbuf_bytes_per_partition: int
    events: int
    trace_only: bool = False
    simulate_s: float = 0.0  # wall time of the functional (or trace-only) run
    model_s: float = 0.0  # wall time of the performance model
    timeline_path: str | None = None
    hot_lines: list[HotLine] = Field(default_factory=list)

    def planner_counters(self) -> dict[str, float]:
        """The counters AccelOpt's planner sees, in its order."""
        return planner_counters(self.counters)


def profile_from_breakdown(trace: Sequence[TraceEvent], breakdown: LatencyBreakdown,
                           spec: HardwareSpec, **extra: Any) -> Profile:
    """Assemble a `Profile` from a scheduled trace."""
    total = breakdown.total_s
    d = breakdown.dma
    dma = DmaProfile(
        transfers=d.transfers, total_bytes=d.total_bytes, average_bytes=d.average_bytes,
        descriptors=d.descriptors, bytes_by_kind=dict(d.bytes_by_kind),
        count_by_kind=dict(d.count_by_kind),
        queue_busy_ms={k: v * 1e3 for k, v in sorted(d.queue_busy_s.items())},
        engines_busy_ms=d.engine_busy_s * 1e3, hbm_busy_ms=d.hbm_busy_s * 1e3,
        hbm_utilization=d.hbm_busy_s / total if total else 0.0)
    return Profile(
        hardware=spec.name, cost_model_version=breakdown.cost_model_version,
        latency_ms=total * 1e3, counters=compute_counters(trace, breakdown, spec),
        engine_busy_ms={k: v * 1e3 for k, v in breakdown.engine_busy_s.items()},
        engine_active_ms={k: v * 1e3 for k, v in breakdown.engine_active_s.items()},
        engine_instructions=dict(breakdown.engine_instructions), dma=dma,
        bottleneck=breakdown.bottleneck,
        peak_sbuf_bytes_per_partition=breakdown.spill.peak_bytes_per_partition,
        events=len(trace), hot_lines=hot_lines(breakdown), **extra)


def profile_trace(trace: Sequence[TraceEvent], *, hardware: str | HardwareSpec = "trn1",
                  timeline: str | Path | None = None, kernel_name: str = "kernel",
                  **extra: Any) -> Profile:
    """Time an already recorded trace (for callers that ran the interpreter themselves)."""
    spec = get_spec(hardware) if isinstance(hardware, str) else hardware
    t0 = time.perf_counter()
    breakdown = estimate_latency(trace, spec)
    model_s = time.perf_counter() - t0
    path = None
    if timeline is not None:
        path = str(write_chrome_trace(timeline, breakdown, trace, kernel_name=kernel_name))
    return profile_from_breakdown(trace, breakdown, spec, model_s=model_s, timeline_path=path, **extra)


def _run_kernel() -> Callable[..., tuple[Any, list[TraceEvent]]]:
    try:
        from accelopt_graph.tools.nkisim.interpreter import run_kernel
    except ImportError as e:  # the functional simulator (issue 2) provides run_kernel
        raise RuntimeError("profile_kernel needs accelopt_graph.tools.nkisim.interpreter.run_kernel "
                           f"(the functional simulator), which failed to import: {e}") from e
    return run_kernel


def profile_kernel(kernel: Callable[..., Any], *args: Any, hardware: str = "trn1",
                   grid: tuple[int, ...] | int | None = None, trace_only: bool = False,
                   timeline: str | Path | None = None) -> tuple[Any, Profile]:
    """Simulate `kernel(*args)` and return (outputs, Profile).

    `trace_only=True` records the instruction trace without doing the arithmetic (timing does not
    depend on the data); outputs are then None. `timeline` writes a Chrome trace-event JSON file.
    """
    spec = get_spec(hardware)
    run_kernel = _run_kernel()
    kwargs: dict[str, Any] = {"grid": grid, "collect_trace": True, "compute": not trace_only}
    params = inspect.signature(run_kernel).parameters
    if "hardware" in params:
        kwargs["hardware"] = spec.name
    if "enforce_capacity" in params:
        # The real compiler spills instead of failing (trainium.md §3.7); the model prices the spill.
        kwargs["enforce_capacity"] = False
    t0 = time.perf_counter()
    outputs, trace = run_kernel(kernel, list(args), **kwargs)
    simulate_s = time.perf_counter() - t0
    if trace is None:
        raise RuntimeError("run_kernel returned no trace although collect_trace=True")
    name = getattr(kernel, "__name__", None) or getattr(getattr(kernel, "func", None), "__name__", "kernel")
    profile = profile_trace(trace, hardware=spec, timeline=timeline, kernel_name=name,
                            simulate_s=simulate_s, trace_only=trace_only)
    return (None if trace_only else outputs), profile


__all__ = ["DmaProfile", "HotLine", "Profile", "hot_lines", "profile_from_breakdown", "profile_kernel",
           "profile_trace"]
