"""Retrieval of experiences for one planner call: maximal marginal relevance over task semantics,
current code and profile bottleneck (algorithm.md, "Memory (ExpN)"). Pure functions; the store
feeds them vectors and metadata."""
from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np
from accelopt_graph.memory.embedding import normalize_rows
from accelopt_graph.memory.experience import Experience
from pydantic import BaseModel, ConfigDict


class RetrievalQuery(BaseModel):
    """What the planner is about to work on; empty fields simply do not contribute."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task: str = ""
    family: str = ""
    semantics: str = ""  # the task's reference semantics (NumPy reference or a description)
    code: str = ""  # the candidate kernel the planner will see
    bottleneck: str = ""  # profile summary, e.g. "hbm bound; vector engine 85% active"
    hardware: str = "trn1"
    backend: str = "nkisim"
    exclude_ids: tuple[str, ...] = ()


def query_parts(query: RetrievalQuery) -> list[str]:
    """Texts whose embeddings, each normalised and then summed, form the query vector."""
    parts = [" ".join(p for p in (query.task, query.family, query.semantics) if p), query.code,
             query.bottleneck]
    return [p for p in parts if p.strip()]


def experience_parts(item: Experience) -> list[str]:
    """Texts mirroring `query_parts` for a stored item: where it applies, what code it started from,
    and what bottleneck it addressed (its title, description and plan)."""
    return [f"{item.task} {item.family}", f"{item.before_code}\n{item.snippet_before}",
            f"{item.title}\n{item.description}\n{item.plan}"]


def combine(part_vectors: np.ndarray) -> np.ndarray:
    """Sum unit-normalised part vectors into one unit vector, so a long kernel does not drown the
    short bottleneck text (each part gets equal weight)."""
    if len(part_vectors) == 0:
        raise ValueError("retrieval: nothing to embed; give the query a task, code or bottleneck")
    return combine_batch(part_vectors[None])[0]


def combine_batch(part_vectors: np.ndarray) -> np.ndarray:
    """`combine` for many items at once: (items, parts, dim) -> (items, dim)."""
    n, parts, dim = part_vectors.shape
    units = normalize_rows(part_vectors.reshape(n * parts, dim)).reshape(n, parts, dim)
    return normalize_rows(units.sum(axis=1))


def mmr_select(relevance: np.ndarray, similarity: np.ndarray, *, k: int, lambda_: float,
               sources: Sequence[Hashable], polarities: Sequence[str], recency: Sequence[float],
               min_polarity_share: float = 0.25) -> list[int]:
    """Greedily pick up to `k` indices maximising lambda * relevance - (1 - lambda) * max similarity
    to the items already picked.

    Constraints: at most one index per source; when both polarities are present, each gets at least
    ceil(min_polarity_share * k) slots if it has that many sources. Exact score ties go to the most
    recent item (larger `recency`), then the lower index.
    """
    n = len(relevance)
    if not (similarity.shape == (n, n) and len(sources) == len(polarities) == len(recency) == n):
        raise ValueError("mmr_select: relevance, similarity, sources, polarities and recency disagree in size")
    sources_of: dict[str, set[Hashable]] = {}
    for src, pol in zip(sources, polarities):
        sources_of.setdefault(pol, set()).add(src)
    quota = {}
    if len(sources_of) > 1:
        want = math.ceil(min_polarity_share * k)
        quota = {pol: min(want, len(srcs)) for pol, srcs in sources_of.items()}
    picked: list[int] = []
    used_sources: set[Hashable] = set()
    count = dict.fromkeys(sources_of, 0)
    redundancy = np.full(n, -np.inf)  # max similarity to the picked items
    while len(picked) < k:
        open_ = [i for i in range(n) if sources[i] not in used_sources]
        if not open_:
            break
        short = {p for p, q in quota.items() if count[p] < q}
        if short and sum(quota[p] - count[p] for p in short) >= k - len(picked):
            open_ = [i for i in open_ if polarities[i] in short] or open_
        penalty = redundancy if picked else np.zeros(n)
        best = max(open_, key=lambda i: (lambda_ * relevance[i] - (1 - lambda_) * penalty[i], recency[i], -i))
        picked.append(best)
        used_sources.add(sources[best])
        count[polarities[best]] += 1
        redundancy = np.maximum(redundancy, similarity[best])
    return picked
