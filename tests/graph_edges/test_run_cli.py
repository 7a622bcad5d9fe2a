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
