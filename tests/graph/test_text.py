"""Settings, prompts and parsing: the text edges of the graph."""
from __future__ import annotations

import pytest

from accelopt_graph.memory.experience import Experience
from accelopt_graph.parsing import extract_kernel, kernel_function_name, parse_plan, parse_summary
from accelopt_graph.prompting import PromptError, format_experiences, format_profile, placeholders, render, template
from accelopt_graph.settings import Settings
from accelopt_graph.tools.backend import EvalResult, EvalStatus

TEMPLATES = ["planner_system", "planner", "executor_system", "executor", "fixer", "summarizer"]


def test_settings_yaml_errors_name_file_and_field(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.yaml"):
        Settings.from_yaml(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("search:\n  beam_widht: 3\n")
    with pytest.raises(ValueError, match=r"bad.yaml.*\n.*search.beam_widht"):
        Settings.from_yaml(bad)


def test_settings_overrides_merge_and_revalidate():
    s = Settings().with_overrides({"search.beam_width": 5, "models": {"planner": {"model": "m"}}})
    assert s.search.beam_width == 5 and s.search.plans_per_candidate == 4 and s.models.planner.model == "m"
    with pytest.raises(ValueError, match="search.beam_width"):
        s.with_overrides({"search": {"beam_width": 0}})


def test_faithful_switches_reference_behaviour():
    s = Settings().with_overrides({"search": {"faithful": True}})
    assert s.search.reference_beam and not s.search.dedup_plans


@pytest.mark.parametrize("name", TEMPLATES)
def test_every_template_renders_without_leftovers(name):
    variables = {p: f"<{p}>" for p in placeholders(template(name))}
    text = render(name, **variables)
    assert all(f"<{p}>" in text for p in variables)
    assert "{" not in text.replace("{{", "")


def test_render_rejects_missing_and_extra_variables():
    with pytest.raises(PromptError, match="missing variables"):
        render("planner_system", knowledge="k")
    with pytest.raises(PromptError, match=r"unexpected variables \['oops'\]"):
        render("planner_system", knowledge="k", experiences="e", oops=1)


def test_profile_is_labelled_simulated_in_fixed_order():
    result = EvalResult(status=EvalStatus.OK, latency_ms=1.5, counters={"hbm_write_bytes": 2.0, "hbm_read_bytes": 4.0})
    text = format_profile(result)
    assert "simulated" in text and text.index("hbm_read_bytes") < text.index("hbm_write_bytes")


def test_negative_experiences_read_as_warnings():
    exp = Experience(slow_code="a", fast_code="b", speedup=0.5, polarity="negative", title="Split loops",
                     description="d")
    assert "Avoid" in format_experiences([exp]) and "2.00x slower" in format_experiences([exp])
    assert format_experiences([]) == "(no experiences yet)"


def test_extract_kernel_takes_the_block_that_defines_the_kernel():
    answer = ("Helper first:\n```python\ndef helper():\n    pass\n```\nNow the kernel:\n"
              "```python\nimport neuronxcc.nki as nki\n@nki.jit\ndef kernel(x):\n    return x\n```\n")
    assert extract_kernel(answer, "kernel").startswith("import neuronxcc.nki")
    assert extract_kernel(answer, "other") is None
    assert extract_kernel("no code here", "kernel") is None
    assert extract_kernel("```python\n@nki.jit\ndef kernel(x):\n    return x\n", "kernel")  # unterminated
    assert kernel_function_name("import x\n@nki.jit\ndef silu_kernel(a):\n    pass\n") == "silu_kernel"


def test_parse_plan_json_and_free_text():
    p = parse_plan('Sure.\n```json\n{"title": "Fuse", "bottleneck": "vector", "change": "one activation"}\n```')
    assert p.title == "Fuse" and p.bottleneck == "vector" and "one activation" in p.text
    free = parse_plan("**Use bigger tiles**\nLoad 2048 columns per DMA.")
    assert free.title == "Use bigger tiles" and "2048" in free.text
    assert parse_plan("   ") is None


def test_parse_summary():
    s = parse_summary("**Fuse passes**\nOne pass.\nOriginal:\n```python\na\n```\nOptimized:\n```python\nb\n```")
    assert (s.title, s.description, s.snippet_before, s.snippet_after) == ("Fuse passes", "One pass.", "a", "b")
    assert parse_summary("No optimization found") is None


@pytest.mark.parametrize("name", ["trn1-nki-legacy", "trn2-nki-legacy"])
def test_knowledge_packs_render_their_hardware(name):
    from accelopt_graph.prompting import knowledge_pack

    text = knowledge_pack(name)
    assert ("24 MiB" in text) == (name == "trn1-nki-legacy") and "{" not in text
    with pytest.raises(PromptError, match="unknown knowledge pack"):
        knowledge_pack("tpu")


def test_environment_overrides_use_double_underscores():
    env = {"ACCELOPT__MODELS__PLANNER__BASE_URL": "http://gpu:8000/v1", "ACCELOPT__SEARCH__BEAM_WIDTH": "5",
           "OTHER": "x"}
    s = Settings().with_env(env)
    assert s.models.planner.base_url == "http://gpu:8000/v1" and s.search.beam_width == 5
    with pytest.raises(ValueError, match="search.beam_widht"):
        Settings().with_env({"ACCELOPT__SEARCH__BEAM_WIDHT": "5"})


@pytest.mark.parametrize("name", ["default", "paper-nkibench", "vllm", "openai"])
def test_config_presets_load(name):
    from pathlib import Path

    settings = Settings.from_yaml(Path(__file__).parents[2] / "configs" / f"{name}.yaml")
    if name == "paper-nkibench":
        s = settings.search
        assert (s.iterations, s.beam_width, s.plans_per_candidate, s.samples_per_plan, s.fixer_steps) == (15, 6, 12, 2, 0)
        assert s.reference_beam and not s.dedup_plans and settings.memory.eviction == "random"
    if name in ("vllm", "openai"):
        assert all(settings.models.for_role(r).base_url for r in ("planner", "executor", "summarizer", "fixer"))
        assert settings.prices
