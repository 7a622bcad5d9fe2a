"""Prompt rendering: templates are files in `prompts/`; `render()` fails on missing or extra
placeholders so a renamed variable can never silently leave "{kernel}" in a prompt (style.md §3.7)."""
from __future__ import annotations

import string
from functools import cache
from importlib import resources
from typing import Any, Sequence

from accelopt_graph.memory.experience import Experience
from accelopt_graph.memory.experience import format_experiences as _format_experiences
from accelopt_graph.tools.backend import EvalResult

# The paper's profile counters in a fixed order (algorithm.md, "Plan"); neuron-profile field names.
PROFILE_FIELDS: tuple[str, ...] = (
    "hbm_read_bytes",
    "hbm_write_bytes",
    "psum_read_bytes",
    "psum_write_bytes",
    "sbuf_read_bytes",
    "sbuf_write_bytes",
    "spill_save_bytes",
    "spill_reload_bytes",
    "hardware_flops",
    "transpose_flops",
    "mm_arithmetic_intensity",
    "hfu_estimated_percent",
    "tensor_engine_active_time_percent",
    "vector_engine_active_time_percent",
    "scalar_engine_active_time_percent",
    "gpsimd_engine_active_time_percent",
    "dma_active_time_percent",
)


class PromptError(ValueError):
    """A template and the variables given to it do not match."""


@cache
def template(name: str) -> str:
    """Return the text of `prompts/<name>.md`."""
    path = resources.files("accelopt_graph") / "prompts" / f"{name}.md"
    if not path.is_file():
        raise PromptError(f"prompt template not found: accelopt_graph/prompts/{name}.md")
    return path.read_text()


def placeholders(text: str) -> set[str]:
    """Return the `{name}` placeholders of a template (`{{`/`}}` are literal braces)."""
    return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}


def render(name: str, **variables: Any) -> str:
    """Fill template `name`; every placeholder must be given and every variable must be used."""
    text = template(name)
    wanted = placeholders(text)
    missing = sorted(wanted - variables.keys())
    extra = sorted(variables.keys() - wanted)
    if missing or extra:
        raise PromptError(f"prompts/{name}.md: missing variables {missing}, unexpected variables {extra}")
    return text.format(**variables)


def format_profile(result: EvalResult | None) -> str:
    """Render latency, % of peak and the profile counters in the fixed order."""
    if result is None:
        return "(not evaluated)"
    source = "simulated (CPU simulator estimate)" if result.source == "simulator" else "measured on hardware"
    lines = [f"status: {result.status.value}", f"latency_ms: {_num(result.latency_ms)} ({source})"]
    if result.percent_of_peak is not None:
        lines.append(f"percent_of_peak: {result.percent_of_peak:.1f}%")
    for field in PROFILE_FIELDS:
        if field in result.counters:
            lines.append(f"{field}: {_num(result.counters[field])}")
    return "\n".join(lines)


def format_experiences(experiences: Sequence[Experience]) -> str:
    """Render retrieved experiences for the planner (the memory's own rendering; negatives warn)."""
    return _format_experiences(experiences) or "(no experiences yet)"


def _num(value: float | None) -> str:
    if value is None:
        return "n/a"
    if float(value).is_integer() and abs(value) >= 1:
        return f"{int(value)}"
    return f"{value:.6g}"


# Knowledge packs by the name a backend gives (`hardware_info(hw)["knowledge_pack"]`): a template in
# prompts/knowledge/ and its hardware facts (trainium.md §1.1 per NeuronCore; trn2 HBM per
# nkibench.md's 2.9 TB/s / 8 cores).
KNOWLEDGE_PACKS: dict[str, tuple[str, dict[str, str]]] = {
    "trn1-nki-legacy": ("nki-legacy", {"hardware": "Trainium (trn1, NeuronCore-v2)", "sbuf": "24 MiB",
                                       "sbuf_partition": "192 KiB", "hbm": "410 GB/s",
                                       "fp32_flops": "23 TFLOPS"}),
    "trn2-nki-legacy": ("nki-legacy", {"hardware": "Trainium2 (trn2, NeuronCore-v3)", "sbuf": "28 MiB",
                                       "sbuf_partition": "224 KiB", "hbm": "360 GB/s",
                                       "fp32_flops": "20 TFLOPS"}),
}
KNOWLEDGE_PACKS["nki"] = KNOWLEDGE_PACKS["trn1-nki-legacy"]


def knowledge_pack(name: str) -> str:
    """Return the knowledge pack a backend names (e.g. "trn1-nki-legacy"), rendered for its hardware."""
    if name not in KNOWLEDGE_PACKS:
        raise PromptError(f"unknown knowledge pack {name!r}; known: {sorted(KNOWLEDGE_PACKS)} "
                          "(accelopt_graph.prompting.KNOWLEDGE_PACKS)")
    template_name, facts = KNOWLEDGE_PACKS[name]
    return render(f"knowledge/{template_name}", **facts)


_ENGINE_FIELDS = {
    "tensor": "tensor_engine_active_time_percent",
    "vector": "vector_engine_active_time_percent",
    "scalar": "scalar_engine_active_time_percent",
    "gpsimd": "gpsimd_engine_active_time_percent",
    "dma": "dma_active_time_percent",
}


def bottleneck_summary(result: EvalResult | None) -> str:
    """Return a one-line profile summary naming the busiest engines (the memory's retrieval query)."""
    if result is None or not result.counters:
        return ""
    busy = sorted(((result.counters.get(f, 0.0), e) for e, f in _ENGINE_FIELDS.items()), reverse=True)
    parts = [f"{engine} {share:.0%} active" for share, engine in busy if share > 0][:3]
    if result.percent_of_peak is not None:
        parts.append(f"{result.percent_of_peak:.0f}% of peak")
    return "; ".join(parts)
