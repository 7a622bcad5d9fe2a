"""Command-line commands of the nkibench room: `accelopt bench` and `accelopt task new|list|show`."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from accelopt_graph.nkibench.task import TASKS_DIR

task_app = typer.Typer(help="Create and inspect NKIBench-format tasks.", no_args_is_help=True)


def _tasks(names: Optional[str], task_dir: Optional[Path], reduced: bool):
    from accelopt_graph.nkibench.task import list_tasks, load_task

    known = list_tasks(task_dir)
    chosen = [n.strip() for n in names.split(",") if n.strip()] if names else known
    unknown = [n for n in chosen if n not in known]
    if unknown:
        raise typer.BadParameter(f"unknown tasks {unknown}; known: {known}", param_hint="--tasks")
    return [load_task(n, task_dir=task_dir, reduced=reduced) for n in chosen]


def _fmt(value: Optional[float], spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _render(report, console) -> None:
    from rich.table import Table

    table = Table(title=f"NKIBench on {report.hardware} ({report.backend}); correctness: {report.checked}")
    for col, justify in (("task", "left"), ("status", "left"), ("latency ms", "right"), ("source", "left"),
                         ("bound", "left"), ("peak ms", "right"), ("% of peak", "right"), ("rel L2", "right")):
        table.add_column(col, justify=justify)
    for r in report.rows:
        source = {"simulator": "simulated", "hardware": "measured"}.get(r.source, r.source) if r.latency_ms else "-"
        status = r.status if r.status == "ok" else f"[red]{r.status}[/red]"
        table.add_row(r.task, status, _fmt(r.latency_ms, ".4f"), source, r.bound, _fmt(r.peak_latency_ms, ".4f"),
                      _fmt(None if r.fraction_of_peak is None else 100 * r.fraction_of_peak, ".1f"),
                      _fmt(r.rel_l2, ".1e"))
    console.print(table)
    for r in report.rows:
        if r.status != "ok":
            console.print(f"[red]{r.task}[/red] ({r.status}): {r.error.strip()[:600]}")
    gm = report.geomean_fraction_of_peak
    label = "simulated" if all(r.source != "hardware" for r in report.rows) else "measured"
    console.print(f"geometric mean of % of peak ({label}): {_fmt(None if gm is None else 100 * gm, '.1f')}% "
                  f"over {report.tasks_ok}/{len(report.rows)} tasks; wall {report.wall_s:.0f} s")


def bench(tasks: Optional[str] = typer.Option(None, "--tasks", help="Comma-separated task names (default: all)."),
          backend: str = typer.Option("nkisim", "--backend", help="nkisim (CPU simulator) or neuron (Trainium)."),
          hardware: str = typer.Option("trn1", "--hardware", help="trn1 or trn2."),
          json_path: Optional[Path] = typer.Option(None, "--json", help="Write rows and counters to this file."),
          kernels: Optional[Path] = typer.Option(None, "--kernels", help="Directory of <task>.py kernels to "
                                                 "evaluate instead of the baselines."),
          task_dir: Optional[Path] = typer.Option(None, "--task-dir", help="Directory of tasks (default: NKIBench)."),
          reduced: bool = typer.Option(False, "--reduced", help="Use each task's small test_parameters."),
          full_check: bool = typer.Option(False, "--full-check", help="Check every seed and adversarial case, "
                                          "not only the bench seed."),
          workers: int = typer.Option(1, "--workers", help="Tasks evaluated concurrently (memory grows with it)."),
          timeout_s: float = typer.Option(600.0, "--timeout-s", help="Per-task evaluation time limit."),
          memory_limit_mb: int = typer.Option(16384, "--memory-limit-mb", help="Per-evaluation memory limit."),
          cache_mb: int = typer.Option(3072, "--cache-mb", help="Bound of the in-memory cache of inputs and "
                                       "reference outputs."),
          ) -> None:
    """Evaluate the NKIBench baselines (or --kernels) and report % of peak per task and its geomean."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from accelopt_graph.nkibench.bench import run_bench
    from accelopt_graph.nkibench.cache import ORACLE_CACHE
    from accelopt_graph.nkibench.peak import known_hardware
    from accelopt_graph.tools.backend import EvalSettings
    from accelopt_graph.tools.registry import make_backend

    if hardware not in known_hardware():
        raise typer.BadParameter(f"unknown hardware {hardware!r}; known: {known_hardware()}", param_hint="--hardware")
    if kernels is not None and not kernels.is_dir():
        raise typer.BadParameter(f"{kernels} is not a directory", param_hint="--kernels")
    chosen = _tasks(tasks, task_dir, reduced)
    ORACLE_CACHE.max_bytes = cache_mb << 20
    settings = EvalSettings(backend=backend, hardware=hardware, timeout_s=timeout_s, memory_limit_mb=memory_limit_mb,
                            output_limit_mb=max(1024, memory_limit_mb // 4))
    be = make_backend(backend, hardware=hardware, workers=max(1, workers))
    console = Console()
    if console.width < 120:  # pipes and CI default to 80 columns; the table needs ~110
        console = Console(width=120)
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=False) as progress:
            bar = progress.add_task(f"bench {backend}/{hardware}", total=len(chosen))

            def on_row(row) -> None:
                progress.update(bar, advance=1, description=f"{row.task}: {row.status}")

            report = run_bench(chosen, backend=be, settings=settings, kernels_dir=kernels, full_check=full_check,
                               workers=workers, on_row=on_row)
    finally:
        close = getattr(be, "close", None)
        if close is not None:
            close()
    _render(report, console)
    if json_path is not None:
        json_path.write_text(json.dumps(report.model_dump(mode="json"), indent=1))
        console.print(f"wrote {json_path}")


@task_app.command("new")
def task_new(name: str = typer.Argument(..., help="Task name (lower-case, digits, underscores)."),
             directory: Path = typer.Option(Path("."), "--dir", help="Where to create the task directory.")) -> None:
    """Scaffold a task directory (task.yaml, reference.py, baseline.py) in the NKIBench format."""
    from accelopt_graph.nkibench.scaffold import scaffold_task

    try:
        path = scaffold_task(name, directory)
    except (FileExistsError, ValueError) as exc:
        raise typer.BadParameter(str(exc), param_hint="NAME") from None
    typer.echo(f"created {path}; edit it, then: accelopt bench --task-dir {directory} --tasks {name}")


@task_app.command("list")
def task_list(task_dir: Optional[Path] = typer.Option(None, "--task-dir"),
              hardware: str = typer.Option("trn1", "--hardware")) -> None:
    """List tasks with their family, parameters, bound and peak latency."""
    from accelopt_graph.nkibench.task import list_tasks, load_task

    for name in list_tasks(task_dir):
        t = load_task(name, task_dir=task_dir)
        p = t.peak(hardware)
        typer.echo(f"{name:24s} {t.family:14s} {p.bound:7s} {p.latency_ms:9.4f} ms  {t.parameters}")


@task_app.command("show")
def task_show(name: str, task_dir: Optional[Path] = typer.Option(None, "--task-dir"),
              reduced: bool = typer.Option(False, "--reduced")) -> None:
    """Print a task's description, kernel signature, correctness rule and peak."""
    from accelopt_graph.nkibench.task import load_task

    t = load_task(name, task_dir=task_dir, reduced=reduced)
    typer.echo(f"{t.name} v{t.version} ({t.family})\n{t.description}\n\n{t.kernel_signature}\n\n{t.correctness_rule}")
    for hw in ("trn1", "trn2"):
        p = t.peak(hw)
        typer.echo(f"peak {hw}: {p.latency_ms:.4f} ms, {p.bound}-bound "
                   f"(vec {p.terms_ms['vec']:.4f} / mm {p.terms_ms['mm']:.4f} / memory {p.terms_ms['memory']:.4f} ms)")


def register(app: typer.Typer) -> None:
    """Add this room's commands to the top-level app."""
    app.command("bench")(bench)
    app.add_typer(task_app, name="task")
