"""Settings of the optimization memory (the `memory:` section of a run config)."""
from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

Eviction = Literal["fifo", "score", "unlimited", "random"]


class MemoryConfig(BaseModel):
    """Where the experience store lives, how items are embedded, retrieved and evicted.

    `capacity` is ExpN, the number of items shown to one planner call. `eviction` bounds the store
    itself: "unlimited" keeps everything and relies on retrieval-time selection (project default),
    "fifo" drops the oldest (paper text), "score" drops the least informative, "random" is the
    reference code's eviction (seeded here). The bounded policies need `max_items`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    path: Path = Path(".accelopt/memory")  # embedded PersistentClient directory
    server_url: str | None = None  # e.g. "http://localhost:8000": HttpClient to a `chroma run` server
    collection: str = "experiences"
    embedding: str = "hashing"  # "hashing[:DIM]" | "sentence-transformers:NAME" | "openai:NAME"
    capacity: int = Field(default=16, ge=0)
    eviction: Eviction = "unlimited"
    max_items: int | None = Field(default=None, ge=1)
    mmr_lambda: float = Field(default=0.7, ge=0.0, le=1.0)  # 1 = pure relevance, 0 = pure diversity
    seed: int = 0
    namespace: str = ""  # extra prefix (team, project) in front of the hardware/backend namespace
    candidate_pool: int = Field(default=64, ge=1)  # nearest neighbours MMR chooses from
    min_polarity_share: float = Field(default=0.25, ge=0.0, le=0.5)  # of k, per polarity, when both exist
    min_relevance: float = Field(default=-1.0, ge=-1.0, le=1.0)  # cosine floor (-1: none); unrelated items stay out
    score_half_life_days: float = Field(default=30.0, gt=0)  # recency decay of the "score" eviction

    @model_validator(mode="after")
    def _bounded_policies_need_a_bound(self) -> MemoryConfig:
        if self.eviction != "unlimited" and self.max_items is None:
            raise ValueError(f"memory.eviction={self.eviction!r} needs memory.max_items "
                             "(or set memory.eviction='unlimited')")
        return self

    @classmethod
    def from_yaml(cls, path: str | Path) -> MemoryConfig:
        """Load from a YAML file: either a full run config with a `memory:` section, or the section alone."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"memory config file not found: {path}")
        raw = yaml.safe_load(path.read_text()) or {}
        if not isinstance(raw, dict):
            raise ValueError(f"{path}: expected a mapping at the top level, got {type(raw).__name__}")
        return cls.model_validate(raw["memory"] if "memory" in raw else raw)
