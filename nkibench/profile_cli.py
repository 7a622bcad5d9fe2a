"""The `accelopt profile` command: time one kernel file on a task's inputs with the performance model."""
from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add `accelopt profile` to the top-level app."""
