"""When the search stops (algorithm.md, "One iteration": stop rules), as one pure function."""
from __future__ import annotations


def stop_reason(*, round_done: int, iterations: int, budget_reason: str | None = None,
                best_fraction_of_peak: float | None = None, target_fraction_of_peak: float | None = None,
                rounds_without_improvement: int = 0, patience: int | None = None) -> str | None:
    """Return why the run stops after round `round_done` (rounds are 0..iterations), or None.

    Reasons: a budget reason ("budget_usd", ...), "target_reached", "no_improvement", "iterations_done".
    """
    if budget_reason is not None:
        return budget_reason
    if (target_fraction_of_peak is not None and best_fraction_of_peak is not None
            and best_fraction_of_peak >= target_fraction_of_peak):
        return "target_reached"
    if patience is not None and rounds_without_improvement >= patience:
        return "no_improvement"
    if round_done >= iterations:
        return "iterations_done"
    return None
