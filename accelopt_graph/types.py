"""Typed values that flow through the AccelOpt graph: plans, candidates, LLM call records.

`speedup` is defined here once (style.md §3.2): slower latency / faster latency, so > 1 is better.
"""
from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from accelopt_graph.tools.backend import EvalResult, EvalStatus

Role = Literal["planner", "executor", "summarizer", "fixer"]
ROLES: tuple[Role, ...] = ("planner", "executor", "summarizer", "fixer")


def speedup(parent_latency_ms: float | None, latency_ms: float | None) -> float | None:
    """Return parent latency / sample latency (> 1: the sample is faster); None when undefined."""
    if parent_latency_ms is None or latency_ms is None or latency_ms <= 0:
        return None
    return parent_latency_ms / latency_ms


def short_hash(*parts: object, length: int = 10) -> str:
    """Return a stable hex digest of `parts` (ids must be deterministic so resumed runs match)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()
    return digest[:length]


class Plan(BaseModel):
    """One planner proposal: a single-step optimization for one beam candidate."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    candidate_id: str
    iteration: int
    rank: int = 0  # the candidate's position in the beam (a reference-mode beam may repeat one)
    index: int  # which of the N planner calls for this candidate
    title: str = ""
    bottleneck: str = ""
    change: str = ""
    expected_effect: str = ""
    text: str = ""  # the plan as the executor sees it
    ok: bool = True  # False: the planner call failed or its answer could not be parsed
    error: str = ""
    merged_into: str | None = None  # id of the plan this near-duplicate was merged into
    experience_ids: tuple[str, ...] = ()  # the memory items the planner was shown


class FixAttempt(BaseModel):
    """One fixer call on a failed sample: the error it saw and the status its rewrite got."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    attempt: int
    error_seen: str
    status: EvalStatus
    code_hash: str = ""


class Candidate(BaseModel):
    """An evaluated kernel: the baseline, or a sample produced by executing a plan on a parent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    parent_id: str | None = None
    plan_id: str | None = None
    plan: str = ""
    code: str
    code_hash: str = ""
    result: EvalResult
    iteration: int = 0
    lineage: tuple[str, ...] = ()  # ancestor ids, root (baseline) first
    order: tuple[int, ...] = ()  # deterministic discovery order: (iteration, beam rank, plan, sample)
    fix_chain: tuple[FixAttempt, ...] = ()
    cached: bool = False  # the result came from the evaluation cache

    @property
    def latency_ms(self) -> float | None:
        """Return the latency if the candidate is correct, else None."""
        return self.result.latency_ms if self.result.is_correct else None

    @property
    def is_correct(self) -> bool:
        return self.result.is_correct


class LLMCall(BaseModel):
    """One chat-model call as recorded in the cost ledger."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Role
    model: str
    iteration: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    latency_s: float = 0.0
    usd: float = 0.0
    ok: bool = True
    error: str = ""
    cached: bool = False  # answered from the run's LLM cache (paid once, in an earlier process)
    call_key: str = ""
    attempts: int = 1

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ExperiencePair(BaseModel):
    """A (parent, sample) pair chosen for the summarizer (algorithm.md, choosing experience pairs)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    parent: Candidate
    sample: Candidate
    speedup: float
    polarity: Literal["positive", "negative"]
    plan: str = ""


__all__ = [
    "ROLES",
    "Candidate",
    "EvalResult",
    "EvalStatus",
    "ExperiencePair",
    "FixAttempt",
    "LLMCall",
    "Plan",
    "Role",
    "short_hash",
    "speedup",
]
