"""Run reports: the summary of one optimization run, built from its candidates and LLM calls.

Everything here is a pure function of plain JSON values (what `candidates.jsonl` and `calls.jsonl`
hold), so `accelopt report RUN` rebuilds the same summary from the files that a live run wrote.
Numbers keep their `source`: a simulator estimate is labelled "simulated", never "measured".
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Iterable, Mapping, Sequence

from accelopt_graph.types import ROLES

Record = Mapping[str, Any]


def _result(candidate: Record) -> Mapping[str, Any]:
    return candidate.get("result") or {}


def correct_latency_ms(candidate: Record) -> float | None:
    """Return the candidate's latency when it passed the checks, else None."""
    result = _result(candidate)
    if result.get("status") == "ok" and result.get("latency_ms") is not None:
        return float(result["latency_ms"])
    return None


def best_candidate(candidates: Iterable[Record]) -> Record | None:
    """Return the fastest correct candidate; ties go to the earliest discovered."""
    best: Record | None = None
    for candidate in candidates:
        latency = correct_latency_ms(candidate)
        if latency is not None and (best is None or latency < correct_latency_ms(best)):
            best = candidate
    return best


def iteration_series(candidates: Sequence[Record], calls: Sequence[Record]) -> list[dict[str, Any]]:
    """Return, per iteration, the best kernel so far and the cumulative LLM spend.

    The run's result is the best kernel ever evaluated (algorithm.md, beam selection), so the
    series is monotone: a later iteration never reports a worse best than an earlier one.
    """
    last = max([int(c.get("iteration", 0)) for c in candidates]
               + [int(c.get("iteration", 0)) for c in calls] + [0])
    usd_by_iteration: dict[int, float] = defaultdict(float)
    for call in calls:
        usd_by_iteration[int(call.get("iteration", 0))] += float(call.get("usd", 0.0))
    series: list[dict[str, Any]] = []
    usd = 0.0
    for iteration in range(last + 1):
        seen = [c for c in candidates if int(c.get("iteration", 0)) <= iteration]
        best = best_candidate(seen)
        usd += usd_by_iteration[iteration]
        series.append({
            "iteration": iteration,
            "evaluated": sum(1 for c in candidates if int(c.get("iteration", 0)) == iteration),
            "best_id": best.get("id") if best else None,
            "best_latency_ms": correct_latency_ms(best) if best else None,
            "best_percent_of_peak": _result(best).get("percent_of_peak") if best else None,
            "usd_cumulative": usd,
        })
    return series


def _token_totals(calls: Iterable[Record]) -> dict[str, Any]:
    totals = {"calls": 0, "failed_calls": 0, "cached_calls": 0, "prompt_tokens": 0,
              "completion_tokens": 0, "reasoning_tokens": 0, "usd": 0.0, "latency_s": 0.0}
    for call in calls:
        totals["calls"] += 1
        totals["failed_calls"] += 0 if call.get("ok", True) else 1
        # A cached row is a call paid by an earlier session whose result reached the state only
        # after a resume replayed it: it counts once, here, and is never paid again.
        totals["cached_calls"] += 1 if call.get("cached") else 0
        for key in ("prompt_tokens", "completion_tokens", "reasoning_tokens"):
            totals[key] += int(call.get(key, 0))
        totals["usd"] += float(call.get("usd", 0.0))
        totals["latency_s"] += float(call.get("latency_s", 0.0))
    return totals


def cost_summary(calls: Sequence[Record]) -> dict[str, Any]:
    """Return spend and tokens in total, per role and per iteration."""
    by_role = {role: _token_totals(c for c in calls if c.get("role") == role) for role in ROLES}
    iterations = sorted({int(c.get("iteration", 0)) for c in calls})
    by_iteration = {str(i): _token_totals(c for c in calls if int(c.get("iteration", 0)) == i)
                    for i in iterations}
    return {**_token_totals(calls), "by_role": {r: t for r, t in by_role.items() if t["calls"]},
            "by_iteration": by_iteration}


def _kernel_view(candidate: Record | None) -> dict[str, Any] | None:
    if candidate is None:
        return None
    result = _result(candidate)
    return {
        "id": candidate.get("id"),
        "iteration": candidate.get("iteration", 0),
        "status": result.get("status"),
        "latency_ms": result.get("latency_ms"),
        "percent_of_peak": result.get("percent_of_peak"),
        "code_hash": candidate.get("code_hash") or result.get("code_hash", ""),
        "lineage": list(candidate.get("lineage", [])),
        "plan": candidate.get("plan", ""),
    }


def build_summary(*, run_id: str, task_name: str, task_params: Mapping[str, Any] | None,
                  candidates: Sequence[Record], calls: Sequence[Record],
                  baseline: Record | None = None, best: Record | None = None,
                  stop_reason: str | None = None, iteration: int | None = None,
                  experiences_added: Sequence[str] = (), status: str = "finished",
                  wall_s: float | None = None, sessions: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """Return the JSON summary of a run (written to summary.json, read by `accelopt report`)."""
    if baseline is None:
        baseline = next((c for c in candidates if not c.get("parent_id")), None)
    if best is None:
        best = best_candidate(candidates)
    base_latency = correct_latency_ms(baseline) if baseline else None
    best_latency = correct_latency_ms(best) if best else None
    sources = {(_result(c).get("source"), _result(c).get("hardware"), _result(c).get("backend"))
               for c in candidates if _result(c)}
    source, hardware, backend = sorted(sources, key=str)[0] if len(sources) == 1 else (
        "mixed" if sources else None, None, None)
    best_view = _kernel_view(best)
    cost = cost_summary(calls)
    if best_view is not None:
        gain = base_latency / best_latency if base_latency and best_latency else None
        best_view["speedup"] = gain
        # The paper compares systems by spend for the speedup reached (algorithm.md, "Cost").
        best_view["usd_per_speedup_gain"] = cost["usd"] / (gain - 1) if gain and gain > 1 else None
    return {
        "run_id": run_id,
        "task": {"name": task_name, "params": dict(task_params or {})},
        "status": status,
        "stop_reason": stop_reason,
        "iterations_done": iteration,
        "source": source,
        "hardware": hardware,
        "backend": backend,
        "baseline": _kernel_view(baseline),
        "best": best_view,
        "candidates": {
            "total": len(candidates),
            "by_status": dict(Counter(str(_result(c).get("status")) for c in candidates)),
            "cached": sum(1 for c in candidates if c.get("cached")),
        },
        "cost": cost,
        "series": iteration_series(candidates, calls),
        "experiences_added": len(experiences_added),
        "wall_s": wall_s,
        "sessions": list(sessions),
    }


def _fmt(value: Any, spec: str = ".4g", missing: str = "-") -> str:
    return missing if value is None else format(value, spec)


def format_report(summary: Mapping[str, Any]) -> str:
    """Render a summary as plain text for the terminal (and for logs)."""
    simulated = summary.get("source") == "simulator"
    unit = "simulated" if simulated else "measured" if summary.get("source") == "hardware" else "?"
    base, best, cost = summary.get("baseline") or {}, summary.get("best") or {}, summary["cost"]
    lines = [
        f"run {summary['run_id']}  task {summary['task']['name']}  "
        f"({summary.get('backend')}/{summary.get('hardware')}, latencies {unit})",
        f"status {summary.get('status')}  stop reason: {summary.get('stop_reason') or '-'}  "
        f"iterations {summary.get('iterations_done')}  wall {_fmt(summary.get('wall_s'), '.1f')} s",
        f"baseline  {_fmt(base.get('latency_ms'))} ms  {_fmt(base.get('percent_of_peak'), '.1f')}% of peak",
        f"best      {_fmt(best.get('latency_ms'))} ms  {_fmt(best.get('percent_of_peak'), '.1f')}% of peak  "
        f"speedup {_fmt(best.get('speedup'), '.3f')}x  ({best.get('id', '-')}, iteration "
        f"{best.get('iteration', '-')})",
        f"candidates {summary['candidates']['total']}  "
        + "  ".join(f"{k}={v}" for k, v in sorted(summary["candidates"]["by_status"].items())),
        f"LLM calls {cost['calls']} (failed {cost['failed_calls']}, from cache {cost['cached_calls']})  "
        f"tokens prompt {cost['prompt_tokens']} completion {cost['completion_tokens']} "
        f"(reasoning {cost['reasoning_tokens']})  USD {cost['usd']:.4f}",
        f"USD per unit of speedup gained {_fmt(best.get('usd_per_speedup_gain'), '.4f')}  "
        f"experiences added {summary.get('experiences_added', 0)}",
        "",
        f"{'iter':>4} {'evaluated':>9} {'best ms':>10} {'% peak':>7} {'USD cum':>9}",
    ]
    for point in summary.get("series", []):
        lines.append(f"{point['iteration']:>4} {point['evaluated']:>9} "
                     f"{_fmt(point['best_latency_ms']):>10} "
                     f"{_fmt(point['best_percent_of_peak'], '.1f'):>7} {point['usd_cumulative']:>9.4f}")
    if cost.get("by_role"):
        lines += ["", f"{'role':<11} {'calls':>5} {'prompt':>8} {'compl.':>8} {'reason.':>8} {'USD':>9}"]
        for role, t in cost["by_role"].items():
            lines.append(f"{role:<11} {t['calls']:>5} {t['prompt_tokens']:>8} "
                         f"{t['completion_tokens']:>8} {t['reasoning_tokens']:>8} {t['usd']:>9.4f}")
    return "\n".join(lines)
