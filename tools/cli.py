"""Command-line commands of the tools room, registered on the `accelopt` app.

`accelopt sandbox-check` shows which isolation layers this machine gives the evaluation sandbox
and what one sandboxed evaluation costs; `accelopt neuron-check` says whether the real Trainium
backend can run here and, if not, what to install and where.
"""
from __future__ import annotations

import typer


def sandbox_check(runs: int = typer.Option(5, "--runs", min=1, help="Sandboxed no-op kernels to time.")) -> None:
    """Run a trivial kernel in the sandbox: report the confinement layers and the overhead per run."""
    import statistics

    import numpy as np
    from accelopt_graph.tools.sandbox import SandboxJob, run_isolated

    x = np.ones((128, 64), np.float32)
    job = SandboxJob(code="def kernel(a):\n    return a\n", cases=[[x]], engine="python")
    results = [run_isolated(job) for _ in range(runs)]
    if results[-1].status != "ok":
        typer.echo(f"sandbox failed: {results[-1].status}: {results[-1].error}", err=True)
        raise typer.Exit(1)
    for layer, state in results[-1].details.get("confinement", {}).items():
        typer.echo(f"{layer:10s} {state}")
    walls = [r.wall_s for r in results]
    typer.echo(f"overhead   median {statistics.median(walls) * 1e3:.0f} ms per evaluation "
               f"(min {min(walls) * 1e3:.0f}, max {max(walls) * 1e3:.0f}; {runs} runs, python engine)")


def neuron_check() -> None:
    """Say whether the Neuron SDK (compiler + neuron-profile) is usable here."""
    from accelopt_graph.tools.neuron import MISSING_SDK_MESSAGE, missing_sdk

    missing = missing_sdk()
    if missing:
        typer.echo(MISSING_SDK_MESSAGE.format(missing=missing))
        raise typer.Exit(1)
    typer.echo("Neuron SDK found: neuronxcc importable and neuron-profile on PATH")


def register(app: typer.Typer) -> None:
    """Add this room's commands to the top-level app."""
    app.command("sandbox-check")(sandbox_check)
    app.command("neuron-check")(neuron_check)
