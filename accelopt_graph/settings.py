"""One pydantic configuration for a run, loaded from YAML (algorithm.md: every default and every
reference-behaviour switch lives here; `faithful: true` restores the paper's behaviour)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Mapping

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from accelopt_graph.memory.config import MemoryConfig
from accelopt_graph.types import ROLES


ENV_PREFIX = "ACCELOPT__"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SearchSettings(_Section):
    """The beam search (algorithm.md, symbols and defaults; cheap defaults, paper values in comments)."""

    iterations: int = Field(3, ge=0)  # T, rounds after round 0 (paper: 15)
    beam_width: int = Field(3, ge=1)  # B (paper: 6)
    plans_per_candidate: int = Field(4, ge=1)  # N (paper: 12)
    samples_per_plan: int = Field(2, ge=1)  # K (paper: 2)
    top_k: int = Field(8, ge=0)  # new experiences per round, at most top_k/2 positive
    max_threshold: float = Field(1.04, gt=0)  # positive pair needs speedup > this
    min_threshold: float = Field(1.15, gt=0)  # negative pair needs speedup < 1/this
    fixer_steps: int = Field(1, ge=0)  # F (paper NKI: 0)
    faithful: bool = False  # reference behaviour everywhere below
    beam_policy: Literal["project", "reference"] = "project"
    merge_duplicate_plans: bool = True
    plan_similarity: float = Field(0.92, gt=0, le=1)  # plans at or above this similarity merge
    patience: int | None = Field(None, ge=1)  # stop after this many rounds without improvement
    target_fraction_of_peak: float | None = Field(None, gt=0)  # stop when best reaches it
    max_concurrency: int = Field(16, ge=1)  # concurrent LLM calls
    malformed_retries: int = Field(1, ge=0)  # re-asks when an answer cannot be parsed
    llm_retries: int = Field(2, ge=0)  # re-tries of a failed call on top of the client's own
    retry_backoff_s: float = Field(1.0, ge=0)

    @property
    def reference_beam(self) -> bool:
        return self.faithful or self.beam_policy == "reference"

    @property
    def dedup_plans(self) -> bool:
        return self.merge_duplicate_plans and not self.faithful


class ModelSettings(_Section):
    """One chat model per role, served by any OpenAI-compatible endpoint."""

    base_url: str | None = None
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"  # name of the environment variable holding the key
    temperature: float | None = 1.0
    max_tokens: int | None = None
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    timeout_s: float = 600.0
    max_retries: int = Field(4, ge=0)  # the OpenAI client's own backoff on 429/5xx/timeouts
    kwargs: dict[str, Any] = Field(default_factory=dict)  # provider quirks, passed to ChatOpenAI


class ModelsSettings(_Section):
    planner: ModelSettings = Field(default_factory=ModelSettings)
    executor: ModelSettings = Field(default_factory=ModelSettings)
    summarizer: ModelSettings = Field(default_factory=ModelSettings)
    fixer: ModelSettings = Field(default_factory=ModelSettings)

    def for_role(self, role: str) -> ModelSettings:
        if role not in ROLES:
            raise KeyError(f"models: unknown role {role!r}; known roles: {', '.join(ROLES)}")
        return getattr(self, role)


class Price(_Section):
    """USD per million tokens. Reasoning tokens are billed as completion tokens (OpenAI usage)."""

    input_per_mtok: float = Field(0.0, ge=0)
    output_per_mtok: float = Field(0.0, ge=0)


class BudgetSettings(_Section):
    """Caps that stop the run cleanly with a recorded stop reason; None means no cap."""

    usd: float | None = Field(None, gt=0)
    tokens: int | None = Field(None, gt=0)
    evaluations: int | None = Field(None, gt=0)
    wall_s: float | None = Field(None, gt=0)


class BackendSettings(_Section):
    name: str = "nkisim"
    hardware: Literal["trn1", "trn2"] = "trn1"
    executor: Literal["local", "ray"] = "local"
    workers: int = Field(2, ge=1)
    ray_address: str | None = None
    seeds: tuple[int, ...] = (0, 21)  # the simulator is deterministic; hardware uses all five
    timeout_s: float = Field(120.0, gt=0)
    memory_limit_mb: int = Field(8192, gt=0)


class RunSettings(_Section):
    # No run-level seed: the graph samples nothing itself (ties break on discovery order); the
    # memory's RNG is seeded by memory.seed, task inputs by the task's seeds.
    run_dir: str = "runs"


class Settings(_Section):
    """The whole run configuration. Unknown keys are errors (a typo never silently becomes a default)."""

    search: SearchSettings = Field(default_factory=SearchSettings)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    models: ModelsSettings = Field(default_factory=ModelsSettings)
    prices: dict[str, Price] = Field(default_factory=dict)  # model name -> price
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    backend: BackendSettings = Field(default_factory=BackendSettings)
    run: RunSettings = Field(default_factory=RunSettings)

    @classmethod
    def from_yaml(cls, path: str | Path) -> Settings:
        """Load a YAML file; a missing file or a bad field raises an error naming both."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"config file not found: {path}")
        raw = yaml.safe_load(path.read_text()) or {}
        if not isinstance(raw, dict):
            raise ValueError(f"{path}: the top level must be a mapping of sections, got {type(raw).__name__}")
        try:
            return cls.model_validate(raw)
        except ValidationError as err:
            raise ValueError(f"{path}: invalid configuration\n{_describe(err)}") from None

    def with_overrides(self, overrides: Mapping[str, Any]) -> Settings:
        """Deep-merge `overrides` (nested dicts; dotted keys allowed) and validate the result again."""
        raw = deep_merge(self.model_dump(mode="json"), _undot(overrides))
        try:
            return type(self).model_validate(raw)
        except ValidationError as err:
            raise ValueError(f"invalid configuration override\n{_describe(err)}") from None

    def with_env(self, environ: Mapping[str, str], *, prefix: str = ENV_PREFIX) -> Settings:
        """Apply `ACCELOPT__SECTION__FIELD=value` variables (YAML scalars) on top, e.g.
        `ACCELOPT__MODELS__PLANNER__BASE_URL=http://gpu-node:8000/v1`; API keys stay in `api_key_env`."""
        overrides = {key[len(prefix):].lower().replace("__", "."): yaml.safe_load(value)
                     for key, value in environ.items() if key.startswith(prefix)}
        return self.with_overrides(overrides) if overrides else self

    def price_usd(self, model: str, *, prompt_tokens: int, completion_tokens: int) -> float:
        """Return the USD cost of one call from the price table (0 for a model without a price)."""
        price = self.prices.get(model)
        if price is None:
            return 0.0
        return (prompt_tokens * price.input_per_mtok + completion_tokens * price.output_per_mtok) / 1e6


def deep_merge(base: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """Return `base` with `update` merged in; nested mappings merge, everything else replaces."""
    merged = dict(base)
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _undot(overrides: Mapping[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for key, value in overrides.items():
        if isinstance(value, Mapping):
            value = _undot(value)
        parts = str(key).split(".")
        node = nested
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        if isinstance(value, dict) and isinstance(node.get(parts[-1]), dict):
            node[parts[-1]] = deep_merge(node[parts[-1]], value)
        else:
            node[parts[-1]] = value
    return nested


def _describe(err: ValidationError) -> str:
    return "\n".join(
        f"  {'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in err.errors()
    )
