"""The NKIBench metric: theoretical peak latency per task and the fraction of it a kernel reaches.

peak_latency = max(vec_flops / PEAK_VEC, mm_flops / PEAK_MM, bytes / PEAK_BW)  (nkibench.md §1),
with the constants read from `hardware.yaml`, each with its source.
"""
from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Literal, Sequence

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

HARDWARE_FILE = Path(__file__).with_name("hardware.yaml")

Bound = Literal["vec", "mm", "memory"]


class Constant(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float = Field(gt=0)
    source: str = Field(min_length=1)


class HardwarePeaks(BaseModel):
    """Per-NeuronCore peak rates of one target."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str
    hbm_bw_bytes_per_s: Constant
    mm_flops_per_s: Constant
    vec_flops_per_s: Constant
    sbuf_bytes_per_partition: Constant


class WorkCount(BaseModel):
    """A task's compulsory work: vector/scalar FLOPs, fp32 matmul FLOPs, HBM bytes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    vec_flops: int = Field(ge=0)
    mm_flops: int = Field(ge=0)
    bytes: int = Field(ge=0)


class Peak(BaseModel):
    """The peak latency of one task on one target and the term that attains it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    hardware: str
    latency_ms: float
    bound: Bound
    terms_ms: dict[str, float]  # vec / mm / memory


@lru_cache(maxsize=None)
def _load_table(path: str) -> dict[str, HardwarePeaks]:
    raw = yaml.safe_load(Path(path).read_text())
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected a mapping of hardware name -> constants")
    table = {}
    for name, body in raw.items():
        try:
            table[name] = HardwarePeaks.model_validate({"name": name, **(body or {})})
        except ValidationError as exc:
            raise ValueError(f"{path}: hardware {name!r}: {exc}") from None
    return table


def hardware_peaks(hardware: str, *, path: Path = HARDWARE_FILE) -> HardwarePeaks:
    """Return the peak constants of `hardware` ("trn1" or "trn2")."""
    table = _load_table(str(path))
    if hardware not in table:
        raise KeyError(f"unknown hardware {hardware!r} in {path}; known: {sorted(table)}")
    return table[hardware]


def known_hardware(*, path: Path = HARDWARE_FILE) -> list[str]:
    return sorted(_load_table(str(path)))


def peak_latency(work: WorkCount, hardware: str) -> Peak:
    """Compute the theoretical peak latency of `work` on `hardware` and its bound."""
    hw = hardware_peaks(hardware)
    terms = {
        "vec": work.vec_flops / hw.vec_flops_per_s.value * 1e3,
        "mm": work.mm_flops / hw.mm_flops_per_s.value * 1e3,
        "memory": work.bytes / hw.hbm_bw_bytes_per_s.value * 1e3,
    }
    bound = max(terms, key=terms.__getitem__)
    return Peak(hardware=hardware, latency_ms=terms[bound], bound=bound, terms_ms=terms)


def fraction_of_peak(latency_ms: float, peak_ms: float) -> float:
    """Return peak / latency: 1.0 is the physical limit, the paper reports it in percent."""
    if latency_ms <= 0:
        raise ValueError(f"latency_ms must be positive, got {latency_ms}")
    return peak_ms / latency_ms


def geomean(values: Sequence[float]) -> float:
    """Geometric mean of positive values (the paper's aggregation over tasks)."""
    if not values or any(v <= 0 for v in values):
        raise ValueError(f"geomean needs positive values, got {list(values)}")
    return math.exp(sum(math.log(v) for v in values) / len(values))
