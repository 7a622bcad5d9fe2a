"""The experience item: one slow -> fast (or fast -> slow) kernel rewrite, summarized (paper: optimization memory).

Items carry their provenance and an id derived from content + provenance, so writing the same item
twice (a resumed run, an import) stores it once.
"""
from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Polarity = Literal["positive", "negative"]


class Provenance(BaseModel):
    """Where an experience came from, so it can be traced back to the run that produced it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str = ""
    iteration: int = 0
    parent_id: str = ""  # candidate id of the slow (parent) kernel
    plan_id: str = ""  # id of the plan that produced the sample
    sample_id: str = ""
    models: dict[str, str] = Field(default_factory=dict)  # role -> model name


class Experience(BaseModel):
    """A summarized rewrite. `speedup` = parent latency / sample latency of the *parent -> sample*
    step; polarity says whether that step helped ("positive") or hurt ("negative").

    `slow_code` / `fast_code` are literally the slower and the faster kernel, so for a negative item
    the step went fast_code -> slow_code; `before_code` / `after_code` give the step's direction.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = ""  # derived from content + provenance by the store when empty
    slow_code: str
    fast_code: str
    speedup: float
    polarity: Polarity
    title: str
    description: str
    snippet_before: str = ""
    snippet_after: str = ""
    plan: str = ""
    task: str = ""
    family: str = ""  # operator family, e.g. "matmul", "normalization", "elementwise"
    hardware: str = "trn1"
    backend: str = "nkisim"
    provenance: Provenance = Field(default_factory=Provenance)
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))

    @model_validator(mode="after")
    def _polarity_agrees_with_speedup(self) -> Experience:
        if not (math.isfinite(self.speedup) and self.speedup > 0):
            raise ValueError(f"experience {self.title!r}: speedup must be a finite number > 0, got {self.speedup}")
        if (self.polarity == "positive") != (self.speedup >= 1.0) and self.speedup != 1.0:
            raise ValueError(f"experience {self.title!r}: polarity {self.polarity!r} contradicts speedup "
                             f"{self.speedup} (speedup = parent latency / sample latency; > 1 is positive)")
        return self

    @property
    def before_code(self) -> str:
        """The kernel the step started from (the parent)."""
        return self.slow_code if self.polarity == "positive" else self.fast_code

    @property
    def after_code(self) -> str:
        """The kernel the step produced (the sample)."""
        return self.fast_code if self.polarity == "positive" else self.slow_code

    @property
    def source_key(self) -> tuple[str, str]:
        """The (parent, plan) an item was drawn from; retrieval shows at most one item per source."""
        return (self.provenance.parent_id, self.provenance.plan_id)

    def content_id(self) -> str:
        """Return the id derived from content and provenance (creation time and `id` excluded)."""
        payload = self.model_dump(mode="json", exclude={"id", "created_at"})
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
        return f"exp-{digest[:24]}"

    def with_id(self) -> Experience:
        """Return this item with its content id filled in (unchanged when it already has one)."""
        if self.id:
            return self
        return Experience.model_validate({**self.model_dump(), "id": self.content_id()})

    def to_planner_text(self) -> str:
        """Render the item for the planner prompt; a negative item reads as a warning, not a recipe."""
        where = f" on {self.task}" if self.task else ""
        if self.polarity == "positive":
            head = f"**{self.title}** (made the kernel {self.speedup:.2f}x faster{where})"
            labels = ("Original", "Optimized")
        else:
            # Project default (algorithm.md, "Choosing experience pairs"): keep negatives explicit
            # instead of the reference code's flip, so the planner learns what to avoid.
            slowdown = 1.0 / self.speedup if self.speedup > 0 else float("inf")
            head = (f"**Avoid: {self.title}** (this made the kernel {slowdown:.2f}x slower{where}; "
                    "avoid it or do the reverse)")
            labels = ("Before", "After (slower)")
        parts = [head, self.description.strip()]
        if self.snippet_before or self.snippet_after:
            parts.append(f"{labels[0]}:\n```python\n{self.snippet_before.strip()}\n```")
            parts.append(f"{labels[1]}:\n```python\n{self.snippet_after.strip()}\n```")
        return "\n".join(p for p in parts if p)


def format_experiences(items: Sequence[Experience]) -> str:
    """Render retrieved items as the planner's numbered experience section ("" when there are none)."""
    return "\n\n".join(f"### Experience {i}\n{item.to_planner_text()}" for i, item in enumerate(items, 1))
