"""The experience item: one slow -> fast (or fast -> slow) kernel rewrite, summarized (paper: optimization memory)."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


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
    """A summarized rewrite. `speedup` = slow latency / fast latency of the *parent -> sample* step;
    polarity says whether that step helped ("positive") or hurt ("negative")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = ""  # derived from content + provenance by the store when empty
    slow_code: str
    fast_code: str
    speedup: float
    polarity: Literal["positive", "negative"]
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
