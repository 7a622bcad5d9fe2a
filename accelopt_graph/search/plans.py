"""Merging near-duplicate plans of one candidate before execution, so N planner calls buy N distinct
ideas (algorithm.md, "Plan": embedding similarity; a project default, off in faithful mode)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from accelopt_graph.types import Plan


def plan_text(plan: Plan) -> str:
    """Return the text a plan is embedded by: its title and the change it proposes."""
    return f"{plan.title}\n{plan.change or plan.text}"


def merge_duplicate_plans(plans: Sequence[Plan], vectors: np.ndarray, *, threshold: float) -> list[Plan]:
    """Mark each plan whose (unit-norm) vector is at least `threshold`-similar to an earlier kept plan
    of the same beam slot as merged into it (`merged_into`). Plans are visited in index order;
    failed plans are kept as they are. `vectors[i]` embeds `plans[i]`."""
    if len(vectors) != len(plans):
        raise ValueError(f"merge_duplicate_plans: {len(plans)} plans but {len(vectors)} vectors")
    kept: dict[tuple[str, int], list[int]] = {}
    out = []
    for i in sorted(range(len(plans)), key=lambda i: (plans[i].rank, plans[i].index)):
        plan = plans[i]
        if not plan.ok:
            out.append(plan)
            continue
        group = kept.setdefault((plan.candidate_id, plan.rank), [])
        twin = next((j for j in group if float(vectors[i] @ vectors[j]) >= threshold), None)
        if twin is None:
            group.append(i)
            out.append(plan)
        else:
            out.append(plan.model_copy(update={"merged_into": plans[twin].id}))
    return out
