"""Live progress of a run from the graph's custom stream events (iteration, evaluations, best, spend)."""
from __future__ import annotations

from typing import Any, Mapping

from rich.console import Console
from rich.live import Live
from rich.table import Table


class ProgressState:
    """Running totals folded from `candidate`, `llm_call` and `iteration_done` events."""

    def __init__(self) -> None:
        self.iteration = 0
        self.evaluated = 0
        self.llm_calls = 0
        self.best_latency_ms: float | None = None
        self.best_percent_of_peak: float | None = None
        self.usd_total = 0.0

    def update(self, event: Mapping[str, Any]) -> None:
        kind = event.get("event")
        if kind == "candidate":
            self.evaluated += 1
        elif kind == "llm_call":
            self.llm_calls += 1
        for key in ("iteration", "best_latency_ms", "best_percent_of_peak", "usd_total"):
            if event.get(key) is not None:
                setattr(self, key, event[key])
        if kind == "iteration_done" and event.get("evaluated") is not None:
            self.evaluated = max(self.evaluated, int(event["evaluated"]))

    def line(self) -> str:
        best = "-" if self.best_latency_ms is None else f"{self.best_latency_ms:.4g} ms"
        peak = "-" if self.best_percent_of_peak is None else f"{self.best_percent_of_peak:.1f}%"
        return (f"iteration {self.iteration}  evaluated {self.evaluated}  LLM calls {self.llm_calls}  "
                f"best {best} ({peak} of peak)  spend ${self.usd_total:.4f}")


class ProgressDisplay:
    """A rich live table on a terminal; one plain line per finished iteration elsewhere (logs, CI)."""

    def __init__(self, console: Console | None = None, *, title: str = "accelopt", live: bool | None = None):
        self.console = console or Console(stderr=True)
        self.state = ProgressState()
        self.title = title
        self._live_enabled = self.console.is_terminal if live is None else live
        self._live: Live | None = None

    def __enter__(self) -> ProgressDisplay:
        if self._live_enabled:
            self._live = Live(self._table(), console=self.console, refresh_per_second=4, transient=False)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.update(self._table())
            self._live.__exit__(*exc)

    def __call__(self, event: Mapping[str, Any]) -> None:
        self.state.update(event)
        if self._live is not None:
            self._live.update(self._table())
        elif event.get("event") == "iteration_done":
            self.console.print(self.state.line(), highlight=False, soft_wrap=True)

    def _table(self) -> Table:
        s = self.state
        table = Table(title=self.title, show_header=True)
        for column in ("iteration", "evaluated", "LLM calls", "best latency", "% of peak", "spend (USD)"):
            table.add_column(column, justify="right")
        table.add_row(str(s.iteration), str(s.evaluated), str(s.llm_calls),
                      "-" if s.best_latency_ms is None else f"{s.best_latency_ms:.4g} ms",
                      "-" if s.best_percent_of_peak is None else f"{s.best_percent_of_peak:.1f}",
                      f"{s.usd_total:.4f}")
        return table
