"""The run plot: best % of peak and cumulative LLM cost per iteration (issue 5, run directory)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence


def plot_series(series: Sequence[Mapping[str, Any]], path: str | Path, *, title: str = "",
                simulated: bool = True, baseline_percent_of_peak: float | None = None) -> Path:
    """Write a PNG with best % of peak (left axis) and cumulative USD (right axis) per iteration."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    if not series:
        raise ValueError("plot_series: the series is empty (a run has at least its baseline iteration)")
    iterations = [int(p["iteration"]) for p in series]
    peak = [p.get("best_percent_of_peak") for p in series]
    usd = [float(p.get("usd_cumulative", 0.0)) for p in series]

    # A Figure without pyplot: no global state, safe from worker threads.
    fig = Figure(figsize=(7, 4), dpi=110)
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(iterations, [float("nan") if v is None else v for v in peak], marker="o",
            color="tab:blue", label="best % of peak")
    if baseline_percent_of_peak is not None:
        ax.axhline(baseline_percent_of_peak, color="tab:blue", linestyle=":", alpha=0.6, label="baseline")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("iteration")
    ax.set_ylabel("best % of peak" + (" (simulated)" if simulated else " (measured)"), color="tab:blue")
    ax.set_xticks(iterations)
    ax.grid(alpha=0.3)
    cost_ax = ax.twinx()
    cost_ax.plot(iterations, usd, marker="s", linestyle="--", color="tab:orange", label="cumulative USD")
    cost_ax.set_ylabel("cumulative LLM cost (USD)", color="tab:orange")
    cost_ax.set_ylim(bottom=0)
    handles = ax.get_legend_handles_labels()[0] + cost_ax.get_legend_handles_labels()[0]
    ax.legend(handles=handles, loc="lower right", fontsize="small")
    fig.suptitle(title or "AccelOpt run")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    return path
