"""The `accelopt` command: a thin Typer layer; each room registers its own commands."""
from __future__ import annotations

import typer

app = typer.Typer(
    name="accelopt",
    help="AccelOpt as a LangGraph plugin: optimize, profile and benchmark Trainium NKI kernels.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """AccelOpt as a LangGraph plugin: optimize, profile and benchmark Trainium NKI kernels."""


def _register_rooms() -> None:
    from accelopt_graph.commands import register as register_runs
    from accelopt_graph.memory.cli import register as register_memory
    from accelopt_graph.nkibench.cli import register as register_nkibench
    from accelopt_graph.nkibench.profile_cli import register as register_profile
    from accelopt_graph.tools.cli import register as register_tools

    register_tools(app)
    register_nkibench(app)
    register_profile(app)
    register_memory(app)
    register_runs(app)


@app.command()
def version() -> None:
    """Print the installed version."""
    from accelopt_graph import __version__

    typer.echo(__version__)


_register_rooms()


def main() -> None:
    app()
