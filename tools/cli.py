"""Command-line commands of the tools room, registered on the `accelopt` app."""
from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this room's commands to the top-level app."""
