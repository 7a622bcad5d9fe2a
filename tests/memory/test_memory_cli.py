"""`accelopt memory ...` end to end on an embedded store."""
import json

from typer.testing import CliRunner

from accelopt_graph.cli import app
from accelopt_graph.memory.config import MemoryConfig
from accelopt_graph.memory.store import open_store

from memory_items import make_experience

runner = CliRunner()


def run(*args):
    result = runner.invoke(app, ["memory", *map(str, args)])
    return result.exit_code, result.output


def seeded(tmp_path):
    store = open_store(MemoryConfig(path=tmp_path / "mem"))
    ids = store.add([make_experience(i=0, plan="a"), make_experience("silu", i=1, plan="b", speedup=0.5)])
    return store, ids


def test_list_show_search(tmp_path):
    _, ids = seeded(tmp_path)
    code, out = run("list", "--path", tmp_path / "mem")
    assert code == 0 and "2 of 2 experiences" in out and ids[0] in out
    code, out = run("list", "--path", tmp_path / "mem", "--polarity", "negative")
    assert code == 0 and ids[1] in out and ids[0] not in out
    code, out = run("show", ids[1], "--path", tmp_path / "mem")
    assert code == 0 and "avoid it or do the reverse" in out and "slow kernel" in out
    code, out = run("show", ids[0], "--path", tmp_path / "mem", "--json")
    assert code == 0 and json.loads(out)["id"] == ids[0]
    code, out = run("search", "nl.sigmoid silu", "--path", tmp_path / "mem", "-k", "1")
    assert code == 0 and ids[1] in out and ids[0] not in out


def test_export_import_prune_and_config_file(tmp_path):
    seeded(tmp_path)
    code, out = run("export", tmp_path / "m.jsonl", "--path", tmp_path / "mem")
    assert code == 0 and "exported 2" in out and len((tmp_path / "m.jsonl").read_text().splitlines()) == 2
    cfg = tmp_path / "run.yaml"
    cfg.write_text(f"memory:\n  path: {tmp_path / 'copy'}\n  eviction: fifo\n  max_items: 1\n")
    code, out = run("import", tmp_path / "m.jsonl", "--config", cfg)
    assert code == 0 and "read 2" in out
    assert open_store(MemoryConfig(path=tmp_path / "copy")).count() == 1
    code, out = run("prune", "--path", tmp_path / "mem", "--policy", "fifo", "--max-items", "1", "--dry-run")
    assert code == 0 and "would evict 1" in out
    assert open_store(MemoryConfig(path=tmp_path / "mem")).count() == 2


def test_bad_input_is_named(tmp_path):
    seeded(tmp_path)
    code, out = run("show", "exp-nope", "--path", tmp_path / "mem")
    assert code != 0 and "exp-nope" in out
    code, out = run("prune", "--path", tmp_path / "mem", "--policy", "lru")
    assert code != 0 and "--policy" in out
    code, out = run("list", "--config", tmp_path / "missing.yaml")
    assert code != 0


def test_stats_and_rm(tmp_path):
    _, ids = seeded(tmp_path)
    code, out = run("stats", "--path", tmp_path / "mem")
    assert code == 0 and "silu" in out and "matmul" in out and "1.300x" in out
    code, out = run("rm", ids[0], "exp-nope", "--path", tmp_path / "mem")
    assert code == 1 and "deleted 1 of 2" in out
    assert [i.id for i in open_store(MemoryConfig(path=tmp_path / "mem")).list()] == [ids[1]]
