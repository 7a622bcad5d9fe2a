"""The evaluation contract every backend implements (architecture.md, "Contracts").

A backend takes a task and a candidate kernel's source and returns an `EvalResult`: compiled,
checked on every seed, timed and profiled. `source` says whether numbers were measured on
hardware or estimated by the simulator, so a simulated number is never reported as measured.
"""
from __future__ import annotations

import ast
import hashlib
import re
import threading
from enum import Enum
from typing import Any, Literal, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field


class EvalStatus(str, Enum):
    """The closed set of outcomes of one evaluation."""

    OK = "ok"
    NO_CODE = "no_code"
    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    INCORRECT = "incorrect"
    TIMEOUT = "timeout"
    BENCH_ERROR = "bench_error"
    REJECTED = "rejected"


Source = Literal["hardware", "simulator"]


class EvalResult(BaseModel):
    """Outcome of compiling, checking, timing and profiling one kernel on one backend."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: EvalStatus
    latency_ms: float | None = None
    latency_stats: dict[str, float] = Field(default_factory=dict)  # mean/min/max/std/spread
    counters: dict[str, float] = Field(default_factory=dict)  # neuron-profile field names
    percent_of_peak: float | None = None
    peak_latency_ms: float | None = None
    error: str = ""  # the text the LLM (planner/fixer) sees; tail only, never unbounded
    source: Source = "simulator"
    hardware: str = "trn1"
    backend: str = "nkisim"
    code_hash: str = ""
    rel_l2: float | None = None  # worst relative L2 error over the checked seeds
    seeds: tuple[int, ...] = ()
    wall_s: float | None = None  # time the evaluation itself took
    details: dict[str, Any] = Field(default_factory=dict)  # backend-specific extras (flags, files)
    # Why a `rejected` result is flagged for review: "sandbox_policy", "trace_tampering" or
    # "below_peak" (a latency under the task's physical peak); empty when not flagged.
    flag: str = ""

    @property
    def is_correct(self) -> bool:
        return self.status is EvalStatus.OK and self.latency_ms is not None


class EvalSettings(BaseModel):
    """Backend settings that change an evaluation's result; part of the evaluation cache key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: str = "nkisim"
    hardware: Literal["trn1", "trn2"] = "trn1"
    seeds: tuple[int, ...] = (0, 21, 42, 63, 84)
    timeout_s: float = 600.0
    memory_limit_mb: int = 8192
    # hardware timing protocol (algorithm.md "Correctness and timing")
    warmup: int = 2
    iters: int = 10
    max_repeats: int = 3
    max_spread: float = 0.01
    simulate_first: bool = False  # neuron backend: functional pre-check with nki.simulate_kernel
    # sandbox (tools/sandbox.py): cap on the bytes the kernel's process may write (outputs, logs)
    output_limit_mb: int = 1024


@runtime_checkable
class KernelTask(Protocol):
    """What a backend needs to know about a task (implemented by `accelopt_graph.nkibench`).

    Inputs and reference outputs are in the kernel's layout. Reference outputs are computed in
    the trusted process only and never handed to the process that runs the candidate.
    Optional: `forbidden_dtypes` (names such as "bfloat16"; precision rule); backends read it
    with `getattr(task, "forbidden_dtypes", ())` so tasks without it still satisfy the protocol.
    """

    name: str
    version: int
    rtol: float

    def kernel_inputs(self, seed: int, case: str | None = None) -> list[np.ndarray]: ...

    def reference_outputs(self, seed: int, case: str | None = None) -> list[np.ndarray]: ...

    def check_cases(self) -> Sequence[tuple[int, str | None]]:
        """(seed, adversarial case or None) pairs a correct kernel must pass."""
        ...

    def peak_latency_ms(self, hardware: str) -> float: ...


@runtime_checkable
class KernelBackend(Protocol):
    """Compile, check, time and profile kernels for one kind of accelerator."""

    name: str

    def evaluate(self, task: KernelTask, code: str, settings: EvalSettings) -> EvalResult: ...

    def hardware_info(self, hardware: str) -> Mapping[str, Any]:
        """Peaks and the knowledge-pack name the prompts use."""
        ...


# CPython < 3.11.9 / 3.12.1 keeps the AST converter's recursion depth in interpreter-wide state,
# so `ast.parse` from two threads at once can raise "SystemError: AST constructor recursion depth
# mismatch" (python/cpython gh-106905). The graph evaluates candidates from many threads.
_AST_LOCK = threading.Lock()


def parse_python(source: str, mode: str = "exec") -> ast.AST:
    """Parse Python source with `ast.parse`, serialised across threads (see _AST_LOCK)."""
    with _AST_LOCK:
        return ast.parse(source, mode=mode)


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return tree


def normalized_code_hash(code: str) -> str:
    """Return a hash of the kernel's code that ignores comments, docstrings and layout.

    Parseable code is hashed through its AST (no line numbers), so reformatting or re-commenting
    a kernel hits the evaluation cache; unparseable code falls back to its text with comments and
    blank space removed, so a syntax error is still cached per distinct attempt.
    """
    try:
        canonical = ast.dump(_strip_docstrings(parse_python(code)), annotate_fields=False,
                             include_attributes=False)
        prefix = "ast:"
    except (SyntaxError, ValueError):
        lines = (re.sub(r"#.*$", "", line).rstrip() for line in code.splitlines())
        canonical = "\n".join(line for line in lines if line.strip())
        prefix = "text:"
    return hashlib.sha256((prefix + canonical).encode()).hexdigest()[:32]
