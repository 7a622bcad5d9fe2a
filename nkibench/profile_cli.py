"""The `accelopt profile` command: time one kernel file on a task's inputs with the performance model.

Every number it prints is an estimate of the simulator's performance model (source = simulator).
The kernel file runs in this process: profile your own files; the optimizer evaluates LLM-written
candidates in the sandbox instead.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer


def _kernel_function(module: Any, name: Optional[str], path: Path) -> Any:
    if name:
        if not hasattr(module, name):
            raise typer.BadParameter(f"{path} defines no function {name!r}", param_hint="--kernel-name")
        return getattr(module, name)
    if hasattr(module, "kernel"):
        return module.kernel  # the NKIBench convention
    jitted = [v for k, v in vars(module).items() if not k.startswith("_") and hasattr(v, "func")]
    if len(jitted) != 1:
        raise typer.BadParameter(f"{path} has no `kernel` function and {len(jitted)} @nki.jit functions; "
                                 "name one with --kernel-name", param_hint="--kernel-name")
    return jitted[0]


def _render(profile: Any, *, task: Any, hardware: str, verdict: Any, console: Any) -> None:
    from rich.table import Table

    peak = task.peak(hardware)
    frac = peak.latency_ms / profile.latency_ms if profile.latency_ms else None
    console.print(f"[bold]{task.name}[/bold] on {hardware}: [bold]{profile.latency_ms:.4f} ms[/bold] "
                  f"(simulated, {profile.cost_model_version}); peak {peak.latency_ms:.4f} ms "
                  f"({peak.bound}-bound) -> {100 * frac:.1f}% of peak; bottleneck: {profile.bottleneck}")
    if verdict is not None:
        status = "[green]correct[/green]" if verdict.ok else f"[red]incorrect[/red] {verdict.error[:300]}"
        console.print(f"check: {status} (rel L2 {verdict.rel_l2})")
    engines = Table(title="engines (simulated)")
    for col in ("engine", "busy ms", "active %", "instructions"):
        engines.add_column(col, justify="left" if col == "engine" else "right")
    for e in ("tensor", "vector", "scalar", "gpsimd"):
        engines.add_row(e, f"{profile.engine_busy_ms.get(e, 0.0):.4f}",
                        f"{100 * profile.counters.get(f'{e}_engine_active_time_percent', 0.0):.1f}",
                        str(profile.engine_instructions.get(e, 0)))
    d = profile.dma
    engines.add_row("dma (16 engines)", f"{d.engines_busy_ms / 16:.4f}", f"{100 * d.hbm_utilization:.1f} hbm",
                    str(d.transfers))
    console.print(engines)
    counters = Table(title="neuron-profile counters (simulated)")
    counters.add_column("counter")
    counters.add_column("value", justify="right")
    for k, v in profile.planner_counters().items():
        counters.add_row(k, f"{v:.6g}")
    console.print(counters)
    if profile.hot_lines:
        lines = Table(title="busiest source lines (simulated)")
        for col in ("line", "op", "engine", "instructions", "busy ms", "% of engine"):
            lines.add_column(col, justify="left" if col in ("op", "engine") else "right")
        for h in profile.hot_lines:
            lines.add_row(str(h.line), h.op, h.engine, str(h.instructions), f"{h.busy_ms:.4f}",
                          f"{100 * h.share:.1f}")
        console.print(lines)
    console.print(f"DMA: {d.transfers} transfers, {d.total_bytes} bytes (avg {d.average_bytes:.0f} B), "
                  f"by kind {d.bytes_by_kind}; peak SBUF {profile.peak_sbuf_bytes_per_partition} B/partition; "
                  f"{profile.events} instructions; simulate {profile.simulate_s:.2f} s, model {profile.model_s:.2f} s")
    if profile.timeline_path:
        console.print(f"timeline: {profile.timeline_path} (open in https://ui.perfetto.dev or chrome://tracing)")


def profile(kernel_file: Path = typer.Argument(..., exists=True, dir_okay=False, help="Kernel .py file (legacy NKI)."),
            task: str = typer.Option(..., "--task", help="NKIBench task whose inputs the kernel takes."),
            hardware: str = typer.Option("trn1", "--hardware", help="trn1 or trn2."),
            timeline: Optional[Path] = typer.Option(None, "--timeline", help="Write a Chrome trace-event JSON."),
            kernel_name: Optional[str] = typer.Option(None, "--kernel-name", help="Function to profile "
                                                      "(default: `kernel`)."),
            seed: Optional[int] = typer.Option(None, "--seed", help="Input seed (default: the task's bench seed)."),
            reduced: bool = typer.Option(False, "--reduced", help="Use the task's small test parameters."),
            task_dir: Optional[Path] = typer.Option(None, "--task-dir", help="Directory of NKIBench-format tasks."),
            trace_only: bool = typer.Option(False, "--trace-only", help="Time without computing values (fast; "
                                            "no correctness check)."),
            json_out: bool = typer.Option(False, "--json", help="Print the Profile as JSON instead of tables."),
            ) -> None:
    """Estimate latency, engine use and neuron-profile counters of KERNEL_FILE on a task's inputs."""
    from rich.console import Console

    from accelopt_graph.nkibench.task import load_task
    from accelopt_graph.tools.nkisim import load_module, profile_kernel
    from accelopt_graph.tools.nkisim.hardware import available_specs

    if hardware not in available_specs():
        raise typer.BadParameter(f"unknown hardware {hardware!r}; available: {available_specs()}",
                                 param_hint="--hardware")
    try:
        t = load_task(task, task_dir=task_dir, reduced=reduced)
    except KeyError as e:
        raise typer.BadParameter(str(e.args[0]), param_hint="--task") from None
    module = load_module(kernel_file)
    fn = _kernel_function(module, kernel_name, kernel_file)
    s = t.bench_seed if seed is None else seed
    outputs, prof = profile_kernel(fn, *t.kernel_inputs(s), hardware=hardware, trace_only=trace_only,
                                   timeline=timeline)
    verdict = None if trace_only else t.check(outputs, s)
    if json_out:
        doc = prof.model_dump()
        doc["task"], doc["seed"] = t.name, s
        doc["correct"] = None if verdict is None else verdict.ok
        typer.echo(json.dumps(doc, indent=2))
    else:
        _render(prof, task=t, hardware=hardware, verdict=verdict, console=Console())
    if verdict is not None and not verdict.ok:
        raise typer.Exit(code=1)


def register(app: typer.Typer) -> None:
    """Add `accelopt profile` to the top-level app."""
    app.command("profile")(profile)
