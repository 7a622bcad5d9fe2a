"""Per-hardware constants of the NeuronCore performance model, each with its documented source.

The numbers live in `trn1.yaml` / `trn2.yaml` next to this file (one `value` + `source` per constant,
sources keyed to shared/design/trainium.md). `get_spec("trn1")` loads and validates one preset.
"""
from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

_DATA_DIR = Path(__file__).resolve().parent


class HardwareSpec(BaseModel):
    """One NeuronCore's timing-relevant facts. Frozen; units are in the field names."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    partitions: int
    sbuf_bytes_per_partition: int
    psum_bytes_per_partition: int
    psum_banks: int
    pe_rows: int
    pe_cols: int
    pe_clock_hz: float
    vector_clock_hz: float
    scalar_clock_hz: float
    gpsimd_clock_hz: float
    profiler_clock_hz: float
    pe_fp32_factor: float
    pe_fp8_factor: float
    pe_onezero_fp32_speedup: float
    pe_transpose_fp32_factor: float
    pe_min_stationary_cycles: int
    pe_load_stationary_speedup: float
    pe_fp32_flop_count_factor: float
    min_ii_cycles: int
    static_overhead_cycles: int
    access_overhead_cycles: int
    access_overhead_exposed_fraction: float
    act_read_accumulator_cycles: int
    gpsimd_start_cycles: int
    min_ii_dynamic_cycles: int
    gpsimd_bits_per_cycle: int
    gpsimd_partitions_per_core: int
    strided_access_penalty: float
    strided_access_threshold_bytes: int
    vector_perf_mode: bool
    sbuf_vector_gpsimd_exclusive: bool
    psum_vector_scalar_exclusive: bool
    dma_engines: int
    dma_queues: int
    dma_partitions_per_engine: int
    dma_engine_bytes_per_s: float
    dma_fixed_latency_s: float
    dma_min_descriptor_bytes: int
    dma_transpose_efficiency: float
    hbm_bytes_per_s: float
    profiler_hbm_bytes_per_s: float
    sources: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> HardwareSpec:
        positive = [k for k, v in self.__dict__.items() if isinstance(v, (int, float))
                    and not isinstance(v, bool) and v < 0]
        if positive:
            raise ValueError(f"hardware spec {self.name!r}: negative constants {positive}")
        if self.partitions % self.dma_partitions_per_engine:
            raise ValueError(f"hardware spec {self.name!r}: partitions ({self.partitions}) must be a "
                             f"multiple of dma_partitions_per_engine ({self.dma_partitions_per_engine})")
        missing = sorted(set(_constant_fields()) - set(self.sources))
        if missing:
            raise ValueError(f"hardware spec {self.name!r}: constants without a source: {missing}")
        return self

    @property
    def pe_peak_flops_per_s(self) -> float:
        """Dense 16-bit TensorE peak, 2 x PE count x clock (the profiler's tensor_engine_max_ops_per_sec)."""
        return 2.0 * self.pe_rows * self.pe_cols * self.pe_clock_hz

    @property
    def dma_engine_peak_bytes_per_s(self) -> float:
        return self.dma_engines * self.dma_engine_bytes_per_s

    def clock_hz(self, engine: str) -> float:
        """Clock of a compute engine by its profiler name (tensor, vector, scalar, gpsimd)."""
        clocks = {"tensor": self.pe_clock_hz, "vector": self.vector_clock_hz,
                  "scalar": self.scalar_clock_hz, "gpsimd": self.gpsimd_clock_hz}
        if engine not in clocks:
            raise ValueError(f"HardwareSpec.clock_hz: no clock for engine {engine!r}; "
                             f"known: {sorted(clocks)}")
        return clocks[engine]


def _constant_fields() -> list[str]:
    return [k for k in HardwareSpec.model_fields if k not in ("name", "description", "sources")]


def available_specs() -> list[str]:
    """Names of the hardware presets shipped with the model."""
    return sorted(p.stem for p in _DATA_DIR.glob("*.yaml"))


def _read_preset(path: Path) -> dict[str, Any]:
    raw = yaml.safe_load(path.read_text())
    if not isinstance(raw, dict) or "constants" not in raw:
        raise ValueError(f"{path}: expected a mapping with a 'constants' section")
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    if raw.get("base"):
        parent = _read_preset(_DATA_DIR / f"{raw['base']}.yaml")
        values, sources = parent["values"], parent["sources"]
    for key, entry in raw["constants"].items():
        if not isinstance(entry, dict) or "value" not in entry or not entry.get("source"):
            raise ValueError(f"{path}: constant {key!r} needs both 'value' and a non-empty 'source'")
        values[key] = entry["value"]
        sources[key] = str(entry["source"])
    return {"values": values, "sources": sources, "name": raw.get("name", path.stem),
            "description": raw.get("description", "")}


def load_spec(path: str | Path) -> HardwareSpec:
    """Load a preset file (a user's own hardware description uses the same format)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"hardware preset {path} does not exist")
    data = _read_preset(path)
    return HardwareSpec(name=data["name"], description=data["description"],
                        sources=data["sources"], **data["values"])


@cache
def get_spec(name: str = "trn1") -> HardwareSpec:
    """Return the shipped preset `name` ("trn1" or "trn2")."""
    path = _DATA_DIR / f"{name}.yaml"
    if not path.is_file():
        raise ValueError(f"unknown hardware {name!r}; available: {available_specs()}")
    return load_spec(path)


__all__ = ["HardwareSpec", "available_specs", "get_spec", "load_spec"]
