"""Tiny KernelTasks for the evaluation tests (nkibench-independent, so tools is tested alone)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class AddTask:
    """out = a + b on one (128, F) float32 tile pair."""

    free: int = 64
    peak_ms: float = 1e-6
    name: str = "tiny_add"
    version: int = 1
    rtol: float = 2e-5
    forbidden_dtypes: tuple[str, ...] = ("bfloat16", "float16")
    seeds: tuple[int, ...] = (0, 21, 42)

    def kernel_inputs(self, seed: int, case: str | None = None) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        arrays = [rng.standard_normal((128, self.free), dtype=np.float32) for _ in range(2)]
        for a in arrays:
            a.flags.writeable = False
        return arrays

    def reference_outputs(self, seed: int, case: str | None = None) -> list[np.ndarray]:
        a, b = self.kernel_inputs(seed, case)
        return [a + b]

    def check_cases(self) -> list[tuple[int, str | None]]:
        return [(s, None) for s in self.seeds]

    def peak_latency_ms(self, hardware: str) -> float:
        return self.peak_ms


@dataclass
class SoftmaxTask(AddTask):
    """Row softmax of x (128, F); the `large` case scales inputs by 100 so exp overflows unless
    the kernel subtracts the row max first (nkibench.md: adversarial large-magnitude inputs)."""

    name: str = "tiny_softmax"
    cases: tuple[str, ...] = field(default=("large",))

    def kernel_inputs(self, seed: int, case: str | None = None) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        x = rng.standard_normal((128, self.free), dtype=np.float32)
        if case == "large":
            x = x * np.float32(100.0)
        x.flags.writeable = False
        return [x]

    def reference_outputs(self, seed: int, case: str | None = None) -> list[np.ndarray]:
        (x,) = self.kernel_inputs(seed, case)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return [(e / e.sum(axis=1, keepdims=True)).astype(np.float32)]

    def check_cases(self) -> list[tuple[int, str | None]]:
        return [(s, None) for s in self.seeds] + [(7, c) for c in self.cases]
