"""Capacity and eviction policies of the optimization memory (algorithm.md, "Memory (ExpN)").
Pure functions: given what is stored, say which ids to delete."""
from __future__ import annotations

import math
import random
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from accelopt_graph.memory.config import Eviction

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class StoredItem:
    """What an eviction policy may look at: id, creation time (Unix seconds) and speedup."""

    id: str
    created_at_s: float
    speedup: float


def informativeness(item: StoredItem, *, now_s: float, half_life_days: float) -> float:
    """Score an item: how far its speedup is from 1 (either way, since negatives teach too),
    halved every `half_life_days` of age so the store slowly turns over."""
    age_days = max(0.0, now_s - item.created_at_s) / SECONDS_PER_DAY
    return abs(math.log(item.speedup)) * 0.5 ** (age_days / half_life_days)


def _fifo(items: Sequence[StoredItem], excess: int, **_: float) -> list[str]:
    return [i.id for i in sorted(items, key=lambda i: (i.created_at_s, i.id))[:excess]]


def _score(items: Sequence[StoredItem], excess: int, *, now_s: float, half_life_days: float,
           **_: float) -> list[str]:
    ranked = sorted(items, key=lambda i: (informativeness(i, now_s=now_s, half_life_days=half_life_days),
                                          i.created_at_s, i.id))
    return [i.id for i in ranked[:excess]]


def _random(items: Sequence[StoredItem], excess: int, *, seed: int, **_: float) -> list[str]:
    # The reference code evicts at random without a seed; here the draw is seeded and taken over
    # ids in sorted order, so the same store and seed always evict the same items.
    return random.Random(seed).sample(sorted(i.id for i in items), excess)


POLICIES: dict[str, Callable[..., list[str]]] = {"fifo": _fifo, "score": _score, "random": _random}


def choose_evictions(items: Sequence[StoredItem], *, policy: Eviction, max_items: int | None, seed: int = 0,
                     now_s: float = 0.0, half_life_days: float = 30.0,
                     protect: Collection[str] = ()) -> list[str]:
    """Return the ids to delete so that at most `max_items` remain ("unlimited" never deletes).

    Ids in `protect` (the batch just added) go only if the unprotected items do not cover the excess:
    the reference memory keeps all new items plus a sample of the old ones.
    """
    if policy == "unlimited":
        return []
    if policy not in POLICIES:
        raise ValueError(f"memory.eviction={policy!r}: choose one of {sorted(POLICIES) + ['unlimited']}")
    if max_items is None or max_items < 0:
        raise ValueError(f"memory.eviction={policy!r} needs memory.max_items >= 0, got {max_items}")
    excess = len(items) - max_items
    if excess <= 0:
        return []
    choose = POLICIES[policy]
    old = [i for i in items if i.id not in protect]
    new = [i for i in items if i.id in protect]
    doomed = choose(old, min(excess, len(old)), seed=seed, now_s=now_s, half_life_days=half_life_days)
    if excess > len(old):
        doomed += choose(new, excess - len(old), seed=seed, now_s=now_s, half_life_days=half_life_days)
    return doomed
