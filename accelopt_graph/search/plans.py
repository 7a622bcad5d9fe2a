"""Merging near-duplicate plans of one candidate before execution, so N planner calls buy N distinct
ideas (algorithm.md, "Plan"; a project default, off in faithful mode)."""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from accelopt_graph.types import Plan

_WORD = re.compile(r"[a-z0-9_]+")


def plan_vector(plan: Plan) -> Counter[str]:
    """Return a bag of words (and word pairs) of the plan's title and change."""
    words = _WORD.findall(f"{plan.title} {plan.change or plan.text}".lower())
    return Counter(words + [f"{a} {b}" for a, b in zip(words, words[1:])])


def similarity(a: Counter[str], b: Counter[str]) -> float:
    """Return the cosine similarity of two bags of words."""
    dot = sum(count * b[word] for word, count in a.items())
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def merge_duplicate_plans(plans: Sequence[Plan], *, threshold: float) -> list[Plan]:
    """Mark each plan at least `threshold`-similar to an earlier plan of the same candidate and rank
    as merged into it (`merged_into`); plans are visited in index order. Failed plans are kept as is."""
    kept: dict[tuple[str, str], list[tuple[Plan, Counter[str]]]] = {}
    out = []
    for plan in sorted(plans, key=lambda p: (p.rank, p.index)):
        if not plan.ok:
            out.append(plan)
            continue
        group = kept.setdefault((plan.candidate_id, str(plan.rank)), [])
        vector = plan_vector(plan)
        twin = next((p for p, v in group if similarity(vector, v) >= threshold), None)
        if twin is None:
            group.append((plan, vector))
            out.append(plan)
        else:
            out.append(plan.model_copy(update={"merged_into": twin.id}))
    return out
