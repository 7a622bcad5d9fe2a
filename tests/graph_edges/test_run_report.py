"""Run summaries, the text report and the plot, from plain candidate/call records."""
import json
import struct

import pytest

from accelopt_graph.plot import plot_series
from accelopt_graph.report import best_candidate, build_summary, cost_summary, format_report, iteration_series
from accelopt_graph.rundir import RunDir, RunManifest, read_jsonl, write_jsonl


def cand(id, iteration, latency, status="ok", parent="base", peak=None):
    return {"id": id, "parent_id": None if id == "base" else parent, "iteration": iteration,
            "code": f"# kernel {id}\n", "code_hash": id * 2, "lineage": [] if id == "base" else ["base"],
            "result": {"status": status, "latency_ms": latency, "percent_of_peak": peak,
                       "source": "simulator", "hardware": "trn1", "backend": "nkisim"}}


def call(role, iteration, p, c, r, usd, cached=False, ok=True):
    return {"role": role, "model": "m", "iteration": iteration, "prompt_tokens": p, "completion_tokens": c,
            "reasoning_tokens": r, "latency_s": 0.5, "usd": usd, "ok": ok, "cached": cached}


CANDIDATES = [
    cand("base", 0, 10.0, peak=10.0),
    cand("a", 0, 8.0, peak=12.5),
    cand("b", 0, None, status="incorrect"),
    cand("c", 1, 9.0, peak=11.1),  # worse than the best so far: the series must not regress
    cand("d", 2, 5.0, peak=20.0),
    cand("e", 2, 5.0, peak=20.0),  # a tie: the earlier discovery wins
]
CALLS = [call("planner", 0, 100, 20, 5, 0.01), call("executor", 0, 200, 50, 10, 0.02),
         call("executor", 1, 10, 0, 0, 0.0, ok=False), call("planner", 2, 100, 20, 5, 0.01, cached=True)]


def test_best_candidate_is_fastest_correct_and_earliest_on_ties():
    assert best_candidate(CANDIDATES)["id"] == "d"
    assert best_candidate([cand("x", 0, None, status="compile_error")]) is None


def test_iteration_series_is_monotone_and_accumulates_cost():
    series = iteration_series(CANDIDATES, CALLS)
    assert [p["best_id"] for p in series] == ["a", "a", "d"]
    assert [p["evaluated"] for p in series] == [3, 1, 2]
    assert [round(p["usd_cumulative"], 6) for p in series] == [0.03, 0.03, 0.04]


def test_cost_summary_counts_every_paid_call_once_per_role_and_iteration():
    cost = cost_summary(CALLS)
    assert (cost["calls"], cost["failed_calls"], cost["cached_calls"]) == (4, 1, 1)
    assert (cost["prompt_tokens"], cost["completion_tokens"], cost["reasoning_tokens"]) == (410, 90, 20)
    assert cost["by_role"]["planner"]["prompt_tokens"] == 200
    assert set(cost["by_role"]) == {"planner", "executor"}
    assert cost["by_iteration"]["1"]["failed_calls"] == 1


def test_summary_reports_speedup_against_baseline_and_labels_simulated_numbers():
    summary = build_summary(run_id="r1", task_name="silu", task_params={"N": 8}, candidates=CANDIDATES,
                            calls=CALLS, stop_reason="iterations", iteration=2)
    assert summary["best"]["speedup"] == pytest.approx(2.0)
    assert summary["best"]["usd_per_speedup_gain"] == pytest.approx(0.04 / (2.0 - 1))
    assert summary["baseline"]["id"] == "base"
    assert summary["candidates"]["by_status"] == {"ok": 5, "incorrect": 1}
    assert summary["source"] == "simulator"
    text = format_report(summary)
    assert "simulated" in text and "measured" not in text
    assert "2.000x" in text and "stop reason: iterations" in text
    json.dumps(summary)  # the summary is plain JSON


def test_plot_writes_a_png(tmp_path):
    path = plot_series(iteration_series(CANDIDATES, CALLS), tmp_path / "plot.png", title="t")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width > 300 and height > 200
    with pytest.raises(ValueError, match="empty"):
        plot_series([], tmp_path / "empty.png")


def test_run_dir_round_trip_and_errors(tmp_path):
    run = RunDir(tmp_path / "r").create()
    run.write_manifest(RunManifest(run_id="r", task_name="silu", settings={}))
    assert run.read_manifest().task_name == "silu"
    with pytest.raises(FileExistsError, match="accelopt resume"):
        RunDir(tmp_path / "r").create()
    with pytest.raises(FileNotFoundError, match="not a run directory"):
        RunDir(tmp_path / "nothing").read_manifest()
    write_jsonl(run.candidates, CANDIDATES)
    assert read_jsonl(run.candidates) == CANDIDATES
    run.calls.write_text('{"ok": true}\nnot json\n')
    with pytest.raises(ValueError, match="calls.jsonl:2"):
        read_jsonl(run.calls)
