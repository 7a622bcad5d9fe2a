"""The run commands' error paths: short messages that say what to do, never a traceback."""
import subprocess
import sys

from typer.testing import CliRunner

from accelopt_graph.cli import app


def test_optimize_without_endpoint_says_how_to_configure_one(tmp_path, monkeypatch):
    monkeypatch.delenv("ACCELOPT_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["optimize", "silu"])
    assert result.exit_code == 2
    assert "No LLM endpoint configured" in result.output
    assert "--config" in result.output and "base_url" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not any(tmp_path.iterdir()), "a refused run must not leave a run directory behind"


def test_optimize_without_endpoint_in_a_real_process_prints_no_traceback(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "accelopt_graph", "optimize", "silu"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert "No LLM endpoint configured" in out.stderr
    assert "Traceback" not in out.stderr + out.stdout
    assert len(out.stderr.splitlines()) < 15


def test_config_errors_name_the_file_or_field(tmp_path, monkeypatch):
    monkeypatch.delenv("ACCELOPT_CONFIG", raising=False)
    runner = CliRunner()
    result = runner.invoke(app, ["optimize", "silu", "--config", str(tmp_path / "missing.yaml")])
    assert result.exit_code == 2 and "missing.yaml" in result.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("search:\n  beam_widht: 3\n")
    result = runner.invoke(app, ["optimize", "silu", "--config", str(bad)])
    assert result.exit_code == 2 and "beam_widht" in result.output
    result = runner.invoke(app, ["optimize", "silu", "--param", "novalue"])
    assert result.exit_code != 0 and "KEY=VALUE" in result.output


def test_resume_and_report_reject_a_folder_that_is_not_a_run(tmp_path):
    runner = CliRunner()
    for command in ("resume", "report"):
        result = runner.invoke(app, [command, str(tmp_path)])
        assert result.exit_code == 2
        assert "not a run directory" in result.output


def test_unknown_task_or_backend_is_a_short_error_and_leaves_no_run(tmp_path, monkeypatch):
    monkeypatch.delenv("ACCELOPT_CONFIG", raising=False)
    runner = CliRunner()
    endpoint = ["--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--run-dir", str(tmp_path / "r")]
    result = runner.invoke(app, ["optimize", "nosuch", *endpoint, "--quiet"])
    assert result.exit_code == 2 and "no task 'nosuch'" in result.output and "silu" in result.output
    result = runner.invoke(app, ["optimize", "silu", "--backend", "foo", *endpoint, "--quiet"])
    assert result.exit_code == 2 and "unknown backend 'foo'" in result.output
    assert not (tmp_path / "r").exists()


def test_progress_display_folds_events_into_one_line_per_iteration():
    import io

    from rich.console import Console

    from accelopt_graph.progress import ProgressDisplay

    out = io.StringIO()
    with ProgressDisplay(Console(file=out, width=200), live=False) as display:
        display({"event": "llm_call", "iteration": 0, "usd_total": 0.5})
        display({"event": "candidate", "iteration": 0})
        display({"event": "iteration_done", "iteration": 0, "evaluated": 3, "best_latency_ms": 1.25,
                 "best_percent_of_peak": 40.0, "usd_total": 0.75})
    assert out.getvalue().strip() == ("iteration 0  evaluated 3  LLM calls 1  best 1.25 ms (40.0% of peak)  "
                                      "spend $0.7500")


def test_optimize_refuses_a_run_dir_that_holds_a_run_and_keeps_it(tmp_path):
    from accelopt_graph.rundir import RunDir, RunManifest

    run = RunDir(tmp_path / "r").create()
    run.write_manifest(RunManifest(run_id="r", task_name="silu", settings={}))
    result = CliRunner().invoke(app, ["optimize", "silu", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                                      "--run-dir", str(run.root), "--quiet"])
    assert result.exit_code == 2 and "already holds a run" in result.output and "accelopt resume" in result.output
    assert run.read_manifest().task_name == "silu"


def test_live_progress_table_renders_on_a_terminal():
    import io

    from rich.console import Console

    from accelopt_graph.progress import ProgressDisplay

    out = io.StringIO()
    console = Console(file=out, width=120, force_terminal=True, color_system=None)
    with ProgressDisplay(console, title="accelopt optimize silu") as display:
        display({"event": "iteration_done", "iteration": 2, "evaluated": 17, "best_latency_ms": 0.0064,
                 "best_percent_of_peak": 74.4, "usd_total": 0.0242})
    text = out.getvalue()
    assert "accelopt optimize silu" in text and "74.4" in text and "0.0242" in text and "17" in text
