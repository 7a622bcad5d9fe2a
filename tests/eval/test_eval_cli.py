"""`accelopt sandbox-check` and `accelopt neuron-check`."""
from accelopt_graph.tools import neuron
from typer.testing import CliRunner

from accelopt_graph.cli import app


def test_sandbox_check_reports_layers_and_overhead():
    out = CliRunner().invoke(app, ["sandbox-check", "--runs", "1"])
    assert out.exit_code == 0, out.output
    assert "rlimits" in out.output and "overhead" in out.output and "ms per evaluation" in out.output


def test_neuron_check_without_sdk_says_what_to_install(monkeypatch):
    monkeypatch.setattr(neuron, "missing_sdk", lambda: "Python package 'neuronxcc' not importable")
    out = CliRunner().invoke(app, ["neuron-check"])
    assert out.exit_code == 1 and "pip.repos.neuron.amazonaws.com" in out.output
