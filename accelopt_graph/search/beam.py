"""Beam-search candidate selection (algorithm.md, "Beam selection")."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from accelopt_graph.types import Candidate

BeamPolicy = Literal["project", "reference"]


def _key(candidate: Candidate, latency_ms: float) -> tuple[float, tuple[int, ...], str]:
    return (latency_ms, candidate.order, candidate.id)


def tie_tolerance(candidate: Candidate) -> float:
    """Return the relative latency difference within which `candidate` ties with another.

    On hardware it is the measured max/min spread of its timing (algorithm.md, "Beam selection":
    differences smaller than the spread are noise); the simulator is deterministic, so 0 there.
    """
    if candidate.result.source != "hardware":
        return 0.0
    return max(0.0, float(candidate.result.latency_stats.get("spread", 0.0)))


def rank(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Order correct candidates fastest first; candidates within the group leader's measured spread
    are ties and keep discovery order (earlier first)."""
    remaining = sorted((c for c in candidates if c.is_correct), key=lambda c: _key(c, c.latency_ms))
    ranked: list[Candidate] = []
    while remaining:
        leader = remaining[0]
        tied = [c for c in remaining
                if c.latency_ms <= leader.latency_ms * (1 + max(tie_tolerance(leader), tie_tolerance(c)))]
        ranked += sorted(tied, key=lambda c: (c.order, c.id))
        taken = {id(c) for c in tied}
        remaining = [c for c in remaining if id(c) not in taken]
    return ranked


def best_per_plan(samples: Sequence[Candidate]) -> dict[tuple[str | None, str | None], Candidate | None]:
    """Return each (parent, plan) group's fastest correct sample (None when every sample failed)."""
    groups: dict[tuple[str | None, str | None], Candidate | None] = {}
    for sample in samples:
        group = (sample.parent_id, sample.plan_id)
        current = groups.get(group)
        if sample.is_correct and (current is None or _key(sample, sample.latency_ms) < _key(current, current.latency_ms)):
            groups[group] = sample
        else:
            groups.setdefault(group, None)
    return groups


def select_beam(parents: Sequence[Candidate], samples: Sequence[Candidate], *, width: int,
                policy: BeamPolicy = "project") -> list[Candidate]:
    """Choose the next beam from the current beam (`parents`) and this round's `samples`.

    project: parents compete with their measured latency (best `width` of B + B·N·K), at most one
    kernel per (parent, plan), identical code hashes collapse, ties (within the measured spread on
    hardware) go to earlier discovery.
    reference: each (parent, plan) group offers its fastest sample, a group without a correct sample
    offers its parent at +inf; the `width` lowest win; parents do not compete otherwise, no dedup.
    """
    if width < 1:
        raise ValueError(f"select_beam: width must be >= 1, got {width}")
    groups = best_per_plan(samples)
    if policy == "reference":
        by_id = {p.id: p for p in parents}
        entries: list[tuple[tuple[float, tuple[int, ...], str], Candidate]] = []
        for (parent_id, _), best in groups.items():
            if best is not None:
                entries.append((_key(best, best.latency_ms), best))
            elif parent_id in by_id:
                entries.append((_key(by_id[parent_id], math.inf), by_id[parent_id]))
        entries.sort(key=lambda e: e[0])
        chosen = [c for _, c in entries[:width]]
        return chosen or list(parents)[:width]
    pool = rank([p for p in parents if p.is_correct] + [b for b in groups.values() if b is not None])
    chosen, seen_hashes, seen_ids = [], set(), set()
    for candidate in pool:
        if candidate.id in seen_ids or (candidate.code_hash and candidate.code_hash in seen_hashes):
            continue
        seen_ids.add(candidate.id)
        seen_hashes.add(candidate.code_hash)
        chosen.append(candidate)
        if len(chosen) == width:
            break
    return chosen or list(parents)[:width]


def best_candidate(candidates: Sequence[Candidate]) -> Candidate | None:
    """Return the fastest correct candidate (earliest discovered on ties, hardware spread included)."""
    ranked = rank(candidates)
    return ranked[0] if ranked else None
