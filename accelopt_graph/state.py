"""The graph's typed state, its narrow input/output schemas and the payloads of `Send` branches.

Per-round channels (`plans`, `samples`, `experiences`) collect the fan-out's results through
`operator.add` reducers and are reset with `langgraph.types.Overwrite` when the round is digested.
"""
from __future__ import annotations

import operator
from typing import Annotated, Any

# typing_extensions' TypedDict: pydantic (LangGraph Studio's schema) rejects typing.TypedDict on 3.11.
from typing_extensions import NotRequired, TypedDict

from accelopt_graph.memory.experience import Experience
from accelopt_graph.types import Candidate, ExperiencePair, LLMCall, Plan


class OptimizerInput(TypedDict):
    task_name: str
    task_params: NotRequired[dict[str, Any] | None]


class RunResult(TypedDict, total=False):
    """What a finished run reports (also the Studio server's output)."""

    best: Candidate | None
    baseline: Candidate | None
    iteration: int
    stop_reason: str | None
    ledger: list[LLMCall]
    experiences_added: list[str]


class OptimizerOutput(RunResult, total=False):
    beam: list[Candidate]
    history: list[Candidate]


class OptimizerState(TypedDict, total=False):
    task_name: str
    task_params: dict[str, Any] | None
    baseline: Candidate | None
    beam: list[Candidate]
    best: Candidate | None
    iteration: int  # the round being planned/executed; round 0 expands the baseline
    stop_reason: str | None
    rounds_without_improvement: int
    elapsed_s: float  # wall time of earlier rounds (survives resume)
    history: Annotated[list[Candidate], operator.add]  # every evaluated candidate
    ledger: Annotated[list[LLMCall], operator.add]
    experiences_added: Annotated[list[str], operator.add]
    plans: Annotated[list[Plan], operator.add]  # this round
    samples: Annotated[list[Candidate], operator.add]  # this round, after fixing
    dispatched: int  # execute branches sent this round; `digest` waits until all have reported
    skipped: Annotated[int, operator.add]  # branches that ended without a sample (budget spent)
    experiences: Annotated[list[Experience], operator.add]  # summarized this round, not yet stored


class CandidateBranch(TypedDict):
    """Payload of `retrieve_experiences`: one beam candidate."""

    candidate: Candidate
    rank: int
    iteration: int


class PlanBranch(CandidateBranch):
    """Payload of `plan`: one of the N planner calls for a candidate."""

    index: int
    experiences: str  # the retrieved experiences, rendered once per candidate (not N copies of code)
    experience_ids: list[str]


class ExecuteBranch(CandidateBranch):
    """Payload of `execute`: one of the K executor samples of a plan."""

    plan: Plan
    sample_index: int


class FixBranch(ExecuteBranch):
    """Payload of `fix`: a failed sample and how many fixer calls it has had."""

    sample: Candidate
    attempt: int


class SummarizeBranch(TypedDict):
    pair: ExperiencePair
    iteration: int
