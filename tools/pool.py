"""Device slots and the local executor (issue 7, device slots).

The graph fans out many evaluations at once; each must wait for a free slot: a CPU worker for the
simulator, or one NeuronCore for the Neuron backend, pinned through NEURON_RT_VISIBLE_CORES so two
evaluations never share a core. `evaluate` calls from many threads block in `DeviceSlots.acquire`.
"""
from __future__ import annotations

import queue
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Protocol

from accelopt_graph.tools.sandbox import SandboxJob, SandboxRun, run_isolated


class Executor(Protocol):
    """Runs sandbox jobs somewhere (this machine, a Ray cluster); safe to call from many threads."""

    name: str

    def run(self, job: SandboxJob) -> SandboxRun: ...

    def close(self) -> None: ...


class DeviceSlots:
    """A fixed set of slots; `acquire` blocks until one is free and yields its environment."""

    def __init__(self, slots: Sequence[str], *, env_var: str | None = None):
        if not slots:
            raise ValueError("DeviceSlots: need at least one slot")
        if len(set(slots)) != len(slots):
            raise ValueError(f"DeviceSlots: duplicate slots in {list(slots)}")
        self.slots = tuple(slots)
        self.env_var = env_var
        self._free: queue.Queue[str] = queue.Queue()
        for slot in self.slots:
            self._free.put(slot)

    @classmethod
    def cpu_workers(cls, workers: int) -> DeviceSlots:
        """Slots for the simulator: one per CPU worker process."""
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        return cls([f"cpu{i}" for i in range(workers)])

    @classmethod
    def neuron_cores(cls, cores: Sequence[int]) -> DeviceSlots:
        """Slots for Trainium: one per NeuronCore, pinned with NEURON_RT_VISIBLE_CORES."""
        return cls([str(c) for c in cores], env_var="NEURON_RT_VISIBLE_CORES")

    @property
    def size(self) -> int:
        return len(self.slots)

    @contextmanager
    def acquire(self) -> Iterator[dict[str, str]]:
        slot = self._free.get()
        try:
            yield {self.env_var: slot} if self.env_var else {}
        finally:
            self._free.put(slot)


class LocalPool:
    """Runs each job in a sandbox process on this machine, at most one per slot at a time."""

    name = "local"

    def __init__(self, slots: DeviceSlots):
        self.slots = slots

    def run(self, job: SandboxJob) -> SandboxRun:
        start = time.perf_counter()
        with self.slots.acquire() as slot_env:
            waited_s = time.perf_counter() - start
            run = run_isolated(replace(job, env={**job.env, **slot_env}))
        details = {**run.details, "slot_wait_s": round(waited_s, 4), **slot_env}
        return replace(run, details=details)

    def close(self) -> None:
        pass
