"""`accelopt optimize`, `accelopt resume` and `accelopt report`: thin CLI over accelopt_graph.run."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

import typer
import yaml

CONFIG_ENV = "ACCELOPT_CONFIG"

NO_ENDPOINT_HELP = (
    "No LLM endpoint configured (missing for: {roles}).\n"
    "Give every role an OpenAI-compatible endpoint in a config file, e.g.\n"
    "  models:\n"
    "    planner:  {{base_url: http://localhost:8000/v1, model: openai/gpt-oss-120b}}\n"
    "    executor: {{base_url: http://localhost:8000/v1, model: openai/gpt-oss-120b}}\n"
    "    ...\n"
    "(see configs/vllm.yaml and configs/openai.yaml) and pass it with --config PATH or ${env}=PATH,\n"
    "or set one endpoint for all roles with --base-url URL --model NAME.\n"
    "The API key is read from the environment variable named by models.<role>.api_key_env."
)


def _fail(message: str, code: int = 2) -> None:
    typer.echo(message, err=True)
    raise typer.Exit(code)


def parse_assignments(items: list[str] | None, *, option: str) -> dict[str, Any]:
    """Parse repeated KEY=VALUE options; values are YAML scalars (`M=256` gives an int)."""
    parsed: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint=option)
        parsed[key.strip()] = yaml.safe_load(value) if value.strip() else ""
    return parsed


def load_settings(config: Path | None, overrides: dict[str, Any]) -> tuple[Any, Path | None]:
    """Load the config named by --config or $ACCELOPT_CONFIG (defaults otherwise), then apply overrides."""
    from accelopt_graph.settings import Settings

    path = config or (Path(os.environ[CONFIG_ENV]) if os.environ.get(CONFIG_ENV) else None)
    try:
        settings = Settings.from_yaml(path) if path is not None else Settings()
        return (settings.with_overrides(overrides) if overrides else settings), path
    except (FileNotFoundError, ValueError) as err:
        _fail(f"error: {err}")
        raise AssertionError("unreachable")


def roles_without_endpoint(settings: Any) -> list[str]:
    """Return the roles the run will call that have no base_url or model."""
    from accelopt_graph.types import ROLES

    roles = [r for r in ROLES if r != "fixer" or settings.search.fixer_steps > 0]
    return [r for r in roles
            if not (settings.models.for_role(r).base_url and settings.models.for_role(r).model)]


def _endpoint_overrides(base_url: str | None, model: str | None) -> dict[str, Any]:
    from accelopt_graph.types import ROLES

    fields = {k: v for k, v in (("base_url", base_url), ("model", model)) if v}
    return {"models": {role: dict(fields) for role in ROLES}} if fields else {}


def _print_outcome(outcome: Any) -> None:
    from accelopt_graph.report import format_report

    typer.echo(format_report(outcome.summary))
    typer.echo(f"\nrun directory: {outcome.run_dir.root}")
    if not outcome.finished:
        typer.echo(f"the run is not finished; continue it with: accelopt resume {outcome.run_dir.root}")


def _run_with_progress(title: str, quiet: bool, call: Any) -> Any:
    from accelopt_graph.progress import ProgressDisplay
    from accelopt_graph.run import RunSetupError

    try:
        if quiet:
            return call(None)
        with ProgressDisplay(title=title) as display:
            return call(display)
    except RunSetupError as err:
        _fail(f"error: {err}")
    except KeyboardInterrupt:
        _fail("interrupted; the run directory keeps every finished step (accelopt resume RUN)", code=130)


def optimize(
    task: str = typer.Argument(..., help="NKIBench task name (see `accelopt tasks`)."),
    config: Optional[Path] = typer.Option(None, "--config", "-c", help=f"YAML config (default: ${CONFIG_ENV})."),
    backend: Optional[str] = typer.Option(None, "--backend", help="Evaluation backend: nkisim | neuron."),
    hardware: Optional[str] = typer.Option(None, "--hardware", help="trn1 | trn2."),
    run_dir: Optional[Path] = typer.Option(None, "--run-dir", help="Run directory (default: run.run_dir/<run id>)."),
    param: Optional[list[str]] = typer.Option(None, "--param", "-p", help="Task parameter KEY=VALUE (repeatable)."),
    set_: Optional[list[str]] = typer.Option(None, "--set", help="Config override section.key=VALUE (repeatable)."),
    iterations: Optional[int] = typer.Option(None, "--iterations", help="search.iterations (T)."),
    beam_width: Optional[int] = typer.Option(None, "--beam-width", help="search.beam_width (B)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="One OpenAI-compatible endpoint for every role."),
    model: Optional[str] = typer.Option(None, "--model", help="One model name for every role."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No live progress display."),
) -> None:
    """Optimize one kernel: search, evaluate, write the run directory, print the report."""
    from accelopt_graph.run import run_optimization
    from accelopt_graph.settings import deep_merge

    overrides = deep_merge(_endpoint_overrides(base_url, model), parse_assignments(set_, option="--set"))
    for key, value in (("backend.name", backend), ("backend.hardware", hardware),
                       ("search.iterations", iterations), ("search.beam_width", beam_width)):
        if value is not None:
            overrides[key] = value
    params = parse_assignments(param, option="--param")
    settings, config_path = load_settings(config, overrides)
    missing = roles_without_endpoint(settings)
    if missing:
        _fail(NO_ENDPOINT_HELP.format(roles=", ".join(missing), env=CONFIG_ENV))
    outcome = _run_with_progress(f"accelopt optimize {task}", quiet, lambda display: run_optimization(
        settings, task, params or None, run_dir=run_dir, config_path=config_path, on_event=display))
    _print_outcome(outcome)


def resume(
    run: Path = typer.Argument(..., help="Run directory written by `accelopt optimize`."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No live progress display."),
) -> None:
    """Continue a killed or interrupted run without repeating finished LLM calls or evaluations."""
    from accelopt_graph.rundir import RunDir
    from accelopt_graph.run import resume_optimization

    try:
        RunDir(run).read_manifest()
    except (FileNotFoundError, ValueError) as err:
        _fail(f"error: {err}")
    outcome = _run_with_progress(f"accelopt resume {run.name}", quiet,
                                 lambda display: resume_optimization(run, on_event=display))
    _print_outcome(outcome)


def report(
    run: Path = typer.Argument(..., help="Run directory."),
    as_json: bool = typer.Option(False, "--json", help="Print summary.json instead of the text report."),
    plot: bool = typer.Option(False, "--plot", help="Redraw plot.png from the run's files."),
) -> None:
    """Print a run's report, rebuilt from candidates.jsonl and calls.jsonl."""
    import json

    from accelopt_graph.report import build_summary, format_report
    from accelopt_graph.run import run_status
    from accelopt_graph.rundir import RunDir, read_jsonl

    run_dir = RunDir(run)
    try:
        manifest = run_dir.read_manifest()
        stored = run_dir.read_summary() if run_dir.summary.exists() else {}
        summary = build_summary(
            run_id=manifest.run_id, task_name=manifest.task_name, task_params=manifest.task_params,
            candidates=read_jsonl(run_dir.candidates), calls=read_jsonl(run_dir.calls),
            best=None, stop_reason=stored.get("stop_reason"), iteration=stored.get("iterations_done"),
            status=run_status(run_dir), wall_s=manifest.wall_s,
            sessions=[s.model_dump() for s in manifest.sessions])
        summary["experiences_added"] = stored.get("experiences_added", 0)
    except (FileNotFoundError, ValueError) as err:
        _fail(f"error: {err}")
    if plot and summary["series"]:
        from accelopt_graph.plot import plot_series

        plot_series(summary["series"], run_dir.plot, title=f"{manifest.task_name} ({manifest.run_id})",
                    simulated=summary.get("source") != "hardware",
                    baseline_percent_of_peak=(summary.get("baseline") or {}).get("percent_of_peak"))
    typer.echo(json.dumps(summary, indent=2, sort_keys=True) if as_json else format_report(summary))


def register(app: typer.Typer) -> None:
    """Add the run commands to the `accelopt` app."""
    app.command()(optimize)
    app.command()(resume)
    app.command()(report)
