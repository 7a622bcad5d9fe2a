"""`accelopt profile KERNEL.py --task TASK --hardware trn1 [--timeline out.json]`."""
from __future__ import annotations

import json

from typer.testing import CliRunner

from accelopt_graph.cli import app
from accelopt_graph.nkibench import load_task


def test_profile_command_prints_json_and_writes_a_timeline(tmp_path):
    task = load_task("silu", reduced=True)
    out = tmp_path / "silu.json"
    res = CliRunner().invoke(app, ["profile", str(task.baseline_path), "--task", "silu", "--reduced",
                                      "--hardware", "trn2", "--timeline", str(out), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["source"] == "simulator" and doc["hardware"] == "trn2" and doc["correct"] is True
    assert doc["latency_ms"] > 0 and "hbm_read_bytes" in doc["counters"]
    assert any(e.get("ph") == "X" for e in json.loads(out.read_text())["traceEvents"])


def test_profile_command_table_and_bad_input(tmp_path):
    task = load_task("silu", reduced=True)
    res = CliRunner().invoke(app, ["profile", str(task.baseline_path), "--task", "silu", "--reduced",
                                      "--trace-only"])
    assert res.exit_code == 0, res.output
    assert "% of peak" in res.output and "simulated" in res.output
    bad = CliRunner().invoke(app, ["profile", str(task.baseline_path), "--task", "no_such_task"])
    assert bad.exit_code != 0 and "no_such_task" in bad.output
    bad_hw = CliRunner().invoke(app, ["profile", str(task.baseline_path), "--task", "silu", "--hardware", "trn9"])
    assert bad_hw.exit_code != 0 and "trn9" in bad_hw.output
