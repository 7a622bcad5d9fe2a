"""Experience ids, planner rendering and the memory config."""
import pytest
from pydantic import ValidationError

from accelopt_graph.memory.config import MemoryConfig
from accelopt_graph.memory.experience import Experience, format_experiences

from memory_items import make_experience


def test_content_id_ignores_creation_time_but_not_provenance():
    a = make_experience(minutes=1)
    assert a.content_id() == make_experience(minutes=99).content_id()
    assert a.content_id() != make_experience(minutes=1, run="run-b").content_id()
    assert a.with_id().id == a.content_id() and a.with_id().created_at == a.created_at


def test_positive_renders_as_recipe_negative_as_warning():
    pos = make_experience(speedup=1.25).to_planner_text()
    neg = make_experience(speedup=0.5).to_planner_text()
    assert "1.25x faster" in pos and "Optimized:" in pos and "avoid" not in pos.lower()
    assert "2.00x slower" in neg and "avoid it or do the reverse" in neg and "After (slower):" in neg


def test_format_experiences_numbers_items():
    text = format_experiences([make_experience(i=1), make_experience(i=2)])
    assert "### Experience 1" in text and "### Experience 2" in text
    assert format_experiences([]) == ""


def test_config_rejects_typos_and_unbounded_eviction(tmp_path):
    with pytest.raises(ValidationError, match="capacityy"):
        MemoryConfig(capacityy=3)
    with pytest.raises(ValidationError, match="max_items"):
        MemoryConfig(eviction="fifo")
    assert MemoryConfig(eviction="fifo", max_items=16).max_items == 16


def test_config_from_yaml_section_or_alone(tmp_path):
    full = tmp_path / "run.yaml"
    full.write_text("search: {beam_width: 2}\nmemory:\n  capacity: 4\n  path: /tmp/m\n")
    assert MemoryConfig.from_yaml(full).capacity == 4
    alone = tmp_path / "memory.yaml"
    alone.write_text("capacity: 5\neviction: score\nmax_items: 100\n")
    assert MemoryConfig.from_yaml(alone).eviction == "score"
    with pytest.raises(FileNotFoundError, match="nope.yaml"):
        MemoryConfig.from_yaml(tmp_path / "nope.yaml")


def test_before_and_after_follow_the_step_direction():
    pos, neg = make_experience(speedup=1.5), make_experience(speedup=0.5)
    assert (pos.before_code, pos.after_code) == (pos.slow_code, pos.fast_code)
    assert (neg.before_code, neg.after_code) == (neg.fast_code, neg.slow_code)


def test_polarity_must_agree_with_speedup():
    with pytest.raises(ValidationError, match="contradicts"):
        Experience.model_validate({**make_experience(speedup=1.5).model_dump(), "polarity": "negative"})
    with pytest.raises(ValidationError, match="finite"):
        make_experience(speedup=float("nan"))


def test_pure_modules_do_not_import_chroma():
    import subprocess
    import sys

    code = ("import sys; import accelopt_graph.memory.experience, accelopt_graph.memory.selection, "
            "accelopt_graph.memory.config, accelopt_graph.memory.retrieval, accelopt_graph.memory.eviction; "
            "print('chromadb' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
