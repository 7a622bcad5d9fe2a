"""`accelopt bench` and `accelopt task new` end to end at reduced sizes, on the real simulator backend."""
import json

import pytest

from typer.testing import CliRunner

from accelopt_graph.cli import app
from accelopt_graph.nkibench import load_task
from accelopt_graph.nkibench.bench import run_bench
from accelopt_graph.nkibench.scaffold import scaffold_task
from accelopt_graph.tools.backend import EvalStatus

runner = CliRunner()


def test_bench_table_json_and_a_failing_kernel_is_a_row(tmp_path):
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    (kernels / "silu.py").write_text(load_task("silu").baseline_code)
    (kernels / "rope_single_freq_apply.py").write_text("def kernel(x, freqs_cos, freqs_sin):\n    return (\n")
    out = tmp_path / "bench.json"
    res = runner.invoke(app, ["bench", "--reduced", "--tasks", "silu,rope_single_freq_apply,adamw",
                              "--kernels", str(kernels), "--json", str(out), "--hardware", "trn2"])
    assert res.exit_code == 0, res.output
    assert "geometric mean" in res.output and "simulated" in res.output
    data = json.loads(out.read_text())
    rows = {r["task"]: r for r in data["rows"]}
    assert rows["silu"]["status"] == "ok" and 0 < rows["silu"]["fraction_of_peak"] <= 1
    assert rows["silu"]["counters"] and rows["silu"]["source"] == "simulator"
    assert rows["rope_single_freq_apply"]["status"] == "compile_error"
    assert rows["adamw"]["status"] == "no_code" and "adamw.py" in rows["adamw"]["error"]
    assert data["hardware"] == "trn2" and data["tasks_ok"] == 1
    assert data["geomean_fraction_of_peak"] == rows["silu"]["fraction_of_peak"]


def test_unknown_task_is_a_clear_cli_error():
    res = runner.invoke(app, ["bench", "--tasks", "nosuch"])
    assert res.exit_code != 0 and "nosuch" in res.output


def test_backend_exception_becomes_a_row(settings):
    class Broken:
        name = "broken"

        def evaluate(self, task, code, settings):
            raise RuntimeError("device fell over")

    report = run_bench([load_task("silu", reduced=True)], backend=Broken(), settings=settings)
    assert report.rows[0].status == EvalStatus.BENCH_ERROR.value
    assert "device fell over" in report.rows[0].error and report.geomean_fraction_of_peak is None


def test_task_new_scaffold_is_a_valid_task_whose_baseline_passes(tmp_path, sim_backend, settings):
    res = runner.invoke(app, ["task", "new", "my_op", "--dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    task = load_task("my_op", task_dir=tmp_path, reduced=True)
    result = sim_backend.evaluate(task, task.baseline_code, settings)
    assert result.status is EvalStatus.OK, result.error
    again = runner.invoke(app, ["task", "new", "my_op", "--dir", str(tmp_path)])
    assert again.exit_code != 0
    with pytest.raises(FileExistsError, match="my_op"):
        scaffold_task("my_op", tmp_path)
