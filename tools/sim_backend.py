"""`nkisim`: the CPU-simulator backend (architecture.md, "Contracts"; issue 7).

The kernel runs under the project's NKI simulator inside a sandbox process, which hands back its
outputs and the instruction trace of the timed case as data. This process rebuilds the trace and
runs the performance model on it, so latency and counters come from the trusted side; a kernel can
patch the simulator in its own process, but not the clock that produces its number. Every result
is tagged `source="simulator"`: an estimate, never a measurement.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accelopt_graph.tools.backend import EvalResult, EvalSettings, KernelTask
from accelopt_graph.tools.evaluation import Measurement, MeasurementError, evaluate_candidate
from accelopt_graph.tools.pool import DeviceSlots, Executor, LocalPool
from accelopt_graph.tools.sandbox import SandboxRun


def simulated_profile(run: SandboxRun, timed: int, hardware: str) -> Measurement:
    """Estimate latency and neuron-profile counters from the timed case's trace, in this process."""
    from accelopt_graph.tools.nkisim.profile import profile_trace

    trace = run.cases[timed].trace
    if trace is None:
        raise MeasurementError("the simulator returned no instruction trace for the timed case")
    try:
        profile = profile_trace(list(trace), hardware=hardware)
    except (ValueError, KeyError, ArithmeticError) as exc:
        raise MeasurementError(f"performance model failed on the trace: {exc}") from exc
    if not profile.latency_ms > 0:
        raise MeasurementError("performance model estimated a non-positive latency")
    return Measurement(latency_ms=profile.latency_ms,
                       counters={k: float(v) for k, v in profile.counters.items()},
                       details={"trace_events": profile.events, "bottleneck": profile.bottleneck,
                                "cost_model": profile.cost_model_version,
                                "model_s": round(profile.model_s, 4)})


class SimBackend:
    """Evaluate NKI kernels on the CPU simulator, one sandbox process per evaluation."""

    name = "nkisim"

    def __init__(self, *, executor: Executor | None = None, workers: int = 2, policy: bool = True,
                 confinement: str = "strict"):
        self.executor = executor or LocalPool(DeviceSlots.cpu_workers(workers))
        self.policy = policy
        self.confinement = confinement

    def evaluate(self, task: KernelTask, code: str, settings: EvalSettings) -> EvalResult:
        """Compile, check, time and profile `code`; thread-safe, blocks for a free worker."""
        return evaluate_candidate(task, code, settings, executor=self.executor, engine="nkisim",
                                  measure=simulated_profile, backend=self.name, source="simulator",
                                  policy=self.policy, confinement=self.confinement)

    def hardware_info(self, hardware: str) -> Mapping[str, Any]:
        """Peaks and the knowledge-pack name the prompts use."""
        from accelopt_graph.tools.nkisim.hardware import get_spec

        spec = get_spec(hardware)
        return {"name": hardware, "knowledge_pack": f"{hardware}-nki-legacy", "source": "simulator",
                "spec": spec.model_dump(), "workers": getattr(self.executor, "slots", None) and
                self.executor.slots.size}

    def close(self) -> None:
        self.executor.close()
