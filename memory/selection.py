"""Choosing experience pairs for the summarizer (AccelOpt paper, optimization memory; algorithm.md,
"Choosing experience pairs (TopK)"). Pure functions of the previous round's samples."""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from accelopt_graph.memory.experience import Polarity


@dataclass(frozen=True)
class PairCandidate:
    """One evaluated sample of a (parent, plan): `speedup` = parent latency / sample latency.

    `payload` is opaque to selection (the graph puts its candidate objects there). `flipped` is set
    only in faithful mode on negatives: the reference code labels the parent "fast" and the sample
    "slow", so the summarizer sees a negative step as if it were a positive one.
    """

    parent_id: str
    plan_id: str
    sample_id: str
    speedup: float
    payload: Any = None
    flipped: bool = False

    def __post_init__(self) -> None:
        if not (math.isfinite(self.speedup) and self.speedup > 0):
            raise ValueError(f"PairCandidate {self.sample_id!r}: speedup must be a finite number > 0, "
                             f"got {self.speedup!r} (drop samples without a latency before selection)")

    @property
    def source(self) -> tuple[str, str]:
        return (self.parent_id, self.plan_id)

    @property
    def polarity(self) -> Polarity:
        return "positive" if self.speedup > 1.0 else "negative"


def offer_per_plan(candidates: Iterable[PairCandidate]) -> list[PairCandidate]:
    """Return each (parent, plan)'s offer: its best sample if that is faster than the parent, else its
    worst sample if that is slower; a plan whose best sample ties the parent offers nothing.
    Ties between samples go to the earlier one (input order = discovery order)."""
    groups: dict[tuple[str, str], list[PairCandidate]] = {}
    for c in candidates:
        groups.setdefault(c.source, []).append(c)
    offers = []
    for samples in groups.values():
        best = max(samples, key=lambda c: c.speedup)  # max/min keep the first of equal keys
        if best.speedup > 1.0:
            offers.append(best)
        elif best.speedup < 1.0:
            offers.append(min(samples, key=lambda c: c.speedup))
    return offers


def select_pairs(candidates: Sequence[PairCandidate], *, top_k: int = 8, max_threshold: float = 1.04,
                 min_threshold: float = 1.15, faithful: bool = False) -> list[PairCandidate]:
    """Choose at most `top_k` pairs to summarize: positives (speedup > max_threshold) first, at most
    top_k // 2, largest first; negatives (speedup < 1 / min_threshold) fill the rest, worst first.
    At most one pair per (parent, plan). `faithful` marks negatives as `flipped` (reference code)."""
    if top_k < 0:
        raise ValueError(f"select_pairs: top_k must be >= 0, got {top_k}")
    if max_threshold < 1.0 or min_threshold < 1.0:
        raise ValueError("select_pairs: max_threshold and min_threshold are speedup ratios >= 1, "
                         f"got max_threshold={max_threshold}, min_threshold={min_threshold}")
    offers = offer_per_plan(candidates)
    positives = sorted((c for c in offers if c.speedup > max_threshold), key=lambda c: -c.speedup)
    negatives = sorted((c for c in offers if c.speedup < 1.0 / min_threshold), key=lambda c: c.speedup)
    chosen_pos = positives[: top_k // 2]
    chosen_neg = negatives[: top_k - len(chosen_pos)]
    if faithful:
        chosen_neg = [replace(c, flipped=True) for c in chosen_neg]
    return chosen_pos + chosen_neg
