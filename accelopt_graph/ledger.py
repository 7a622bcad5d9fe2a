"""The cost ledger: every LLM call's tokens, latency and USD; totals per role and per iteration;
budget caps that stop a run cleanly with a recorded reason (issue 5, "Cost ledger")."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from accelopt_graph.settings import BudgetSettings
from accelopt_graph.types import Candidate, LLMCall


@dataclass(frozen=True)
class Totals:
    calls: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    latency_s: float = 0.0
    usd: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, call: LLMCall) -> Totals:
        return Totals(
            calls=self.calls + 1,
            failed=self.failed + (not call.ok),
            prompt_tokens=self.prompt_tokens + call.prompt_tokens,
            completion_tokens=self.completion_tokens + call.completion_tokens,
            reasoning_tokens=self.reasoning_tokens + call.reasoning_tokens,
            latency_s=self.latency_s + call.latency_s,
            usd=self.usd + call.usd,
        )


def total(calls: Iterable[LLMCall]) -> Totals:
    """Sum a sequence of calls."""
    acc = Totals()
    for call in calls:
        acc = acc + call
    return acc


def totals_by_role(calls: Iterable[LLMCall]) -> dict[str, Totals]:
    """Return totals keyed by role (planner, executor, summarizer, fixer)."""
    out: dict[str, Totals] = {}
    for call in calls:
        out[call.role] = out.get(call.role, Totals()) + call
    return out


def totals_by_iteration(calls: Iterable[LLMCall]) -> dict[int, Totals]:
    """Return totals keyed by iteration."""
    out: dict[int, Totals] = {}
    for call in calls:
        out[call.iteration] = out.get(call.iteration, Totals()) + call
    return out


def count_evaluations(history: Iterable[Candidate]) -> int:
    """Return how many evaluations the candidates cost (cache hits are free; each fix re-evaluates)."""
    return sum((not c.cached and bool(c.code)) + len(c.fix_chain) for c in history)


def budget_stop_reason(spent: Totals, *, evaluations: int, wall_s: float,
                       budget: BudgetSettings) -> str | None:
    """Return why the budget is spent ("budget_usd", "budget_tokens", ...) or None."""
    checks = (
        ("budget_usd", budget.usd, spent.usd),
        ("budget_tokens", budget.tokens, spent.tokens),
        ("budget_evaluations", budget.evaluations, evaluations),
        ("budget_wall_s", budget.wall_s, wall_s),
    )
    for reason, cap, used in checks:
        if cap is not None and used >= cap:
            return reason
    return None


class LedgerSink:
    """Thread-safe running totals of this process, so branches can stop spending mid-round.

    The graph state's `ledger` channel is the record of truth; the sink is re-seeded from it at
    every round boundary (`sync`), which also makes a resumed run count what it paid before.
    """

    def __init__(self, budget: BudgetSettings) -> None:
        self.budget = budget
        self._lock = threading.Lock()
        self._spent = Totals()
        self._evaluations = 0
        self._wall_before_s = 0.0
        self._started = time.monotonic()

    def sync(self, calls: Sequence[LLMCall], *, evaluations: int, wall_s: float) -> None:
        with self._lock:
            self._spent = total(calls)
            self._evaluations = evaluations
            self._wall_before_s = wall_s
            self._started = time.monotonic()

    def add_call(self, call: LLMCall) -> None:
        with self._lock:
            self._spent = self._spent + call

    def add_evaluation(self) -> None:
        with self._lock:
            self._evaluations += 1

    def since_sync_s(self) -> float:
        """Seconds since the last `sync` (or since this process built the sink)."""
        return time.monotonic() - self._started

    def wall_s(self) -> float:
        """Wall time of the run so far, counting earlier processes of a resumed run."""
        return self._wall_before_s + time.monotonic() - self._started

    @property
    def spent(self) -> Totals:
        with self._lock:
            return self._spent

    def stop_reason(self) -> str | None:
        with self._lock:
            spent, evaluations = self._spent, self._evaluations
        return budget_stop_reason(spent, evaluations=evaluations, wall_s=self.wall_s(), budget=self.budget)
