"""Framework overhead of an AccelOpt run: everything except LLM latency and kernel evaluation.

Runs the real headless path (`accelopt_graph.run.run_optimization`: LangGraph with `Send` fan-out,
SQLite checkpointer, LLM and evaluation caches, ledger, Chroma memory, run-directory artifacts) at
the paper's NKIBench settings (B=6, N=12, K=2, TopK=8, no plan merging) with a scripted chat model
and a constant-time fake backend, twice:

  1. zero-latency model and backend: all wall time is framework overhead;
  2. model latency L per call and evaluation time E per kernel (on `workers` device slots).

overhead share = wall(1) / wall(2). Framework work partly overlaps the waits in run 2, so this is
an upper bound; real reasoning-model calls take far longer than the default L, which makes the real
share smaller still. Usage:

    python benchmarks/graph_overhead.py [--iterations 2] [--llm-latency-s 1.0] [--eval-s 0.2]
"""
from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from graph.conftest import MarkerTask  # noqa: E402  (test doubles: a task whose kernels carry a latency marker)
from graph.fakes import MarkerBackend, ScriptedChatModel  # noqa: E402

from accelopt_graph.run import run_optimization  # noqa: E402
from accelopt_graph.settings import Settings  # noqa: E402

PLAN = ('```json\n{"title": "Tile %d", "bottleneck": "dma", "change": "use free-dim tiles of %d",'
        ' "expected_effect": "longer DMA runs"}\n```')
SUMMARY = ("**Larger tiles**\nLonger contiguous DMA runs.\nOriginal:\n```python\nload(x[:, :512])\n```\n"
           "Optimized:\n```python\nload(x[:, :2048])\n```")


class TimedModel(ScriptedChatModel):
    """A scripted model that takes `latency_s` per call without holding a thread."""

    latency_s: float = 0.0

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        return self._generate(messages, stop=stop, **kwargs)


class Occurrences:
    """Count how often each prompt was seen, so the N identical planner prompts get N distinct plans."""

    def __init__(self) -> None:
        self._seen: Counter[int] = Counter()
        self._lock = threading.Lock()

    def next(self, prompt: str) -> int:
        with self._lock:
            self._seen[hash(prompt)] += 1
            return self._seen[hash(prompt)]


def models(latency_s: float) -> dict[str, TimedModel]:
    seen = Occurrences()

    def plan(prompt: str) -> str:
        n = seen.next(prompt)
        return PLAN % (n, 256 * n)

    def rewrite(prompt: str) -> str:
        current = float(re.findall(r"LATENCY_MS = ([0-9.]+)", prompt.split("## Plan to implement")[0])[-1])
        factor = 0.75 + 0.02 * (seen.next(prompt) % 20)  # some samples faster, some slower
        return f"```python\n@nki.jit\ndef kernel(x):\n    LATENCY_MS = {current * factor:.6f}\n    return x\n```\n"

    def make(rules, name):
        return TimedModel(rules=rules, default="no idea", name_=name, latency_s=latency_s)

    return {"planner": make([("Propose exactly one", plan)], "planner-model"),
            "executor": make([("Plan to implement", rewrite)], "executor-model"),
            "summarizer": make([("Kernel before the step", SUMMARY)], "summarizer-model"),
            "fixer": make([], "fixer-model")}


class ConstantTimeBackend(MarkerBackend):
    """MarkerBackend that holds one of `workers` device slots for `eval_s` per kernel."""

    def __init__(self, eval_s: float, workers: int) -> None:
        super().__init__()
        self.eval_s = eval_s
        self._slots = threading.Semaphore(workers)

    def evaluate(self, task, code, settings):
        with self._slots:
            if self.eval_s:
                time.sleep(self.eval_s)
            return super().evaluate(task, code, settings)


def paper_settings(root: Path, iterations: int, workers: int) -> Settings:
    return Settings().with_overrides({
        "search": {"iterations": iterations, "beam_width": 6, "plans_per_candidate": 12, "samples_per_plan": 2,
                   "top_k": 8, "fixer_steps": 0, "merge_duplicate_plans": False, "max_concurrency": 16,
                   "retry_backoff_s": 0.0},
        "memory": {"path": str(root / "memory")},
        "backend": {"workers": workers},
        "run": {"run_dir": str(root / "runs")},
    })


def one_run(*, iterations: int, latency_s: float, eval_s: float, workers: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        task = MarkerTask()
        backend = ConstantTimeBackend(eval_s, workers)
        started = time.perf_counter()
        outcome = run_optimization(paper_settings(root, iterations, workers), task.name, task=task,
                                   models=models(latency_s), backend=backend, run_dir=root / "run")
        wall_s = time.perf_counter() - started
    cost = outcome.summary["cost"]
    return {"wall_s": wall_s, "calls": cost["calls"], "evaluations": len(backend.evaluated),
            "candidates": outcome.summary["candidates"]["total"], "stop": outcome.summary["stop_reason"],
            "best_ms": outcome.summary["best"]["latency_ms"]}


def import_startup() -> None:
    """Import what a run loads lazily (graph, Chroma, simulator tasks, matplotlib): a one-off cost
    of each process, reported apart from the per-run overhead."""
    import accelopt_graph.context  # noqa: F401
    import accelopt_graph.graph  # noqa: F401
    import accelopt_graph.nkibench  # noqa: F401
    import matplotlib.figure  # noqa: F401
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver  # noqa: F401


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=2, help="T: rounds after round 0")
    parser.add_argument("--llm-latency-s", type=float, default=1.0)
    parser.add_argument("--eval-s", type=float, default=0.2)
    parser.add_argument("--workers", type=int, default=8, help="device slots of the fake backend")
    parser.add_argument("--repeats", type=int, default=3, help="zero-latency runs; the median is reported")
    args = parser.parse_args()

    started = time.perf_counter()
    import_startup()
    startup_s = time.perf_counter() - started
    bares = sorted((one_run(iterations=args.iterations, latency_s=0.0, eval_s=0.0, workers=args.workers)
                    for _ in range(max(args.repeats, 1))), key=lambda r: r["wall_s"])
    bare = bares[len(bares) // 2]
    timed = one_run(iterations=args.iterations, latency_s=args.llm_latency_s, eval_s=args.eval_s,
                    workers=args.workers)
    print(f"AccelOpt graph overhead at paper settings (B=6, N=12, K=2, TopK=8), {args.iterations + 1} rounds, "
          f"{args.workers} device slots, max 16 concurrent LLM calls")
    print(f"{'run':<34} {'wall s':>8} {'LLM calls':>9} {'evals':>6} {'candidates':>10} {'best ms':>8}")
    for label, r in ((f"zero latency, median of {len(bares)}", bare),
                     (f"L={args.llm_latency_s:g} s/call, E={args.eval_s:g} s/eval", timed)):
        print(f"{label:<34} {r['wall_s']:>8.2f} {r['calls']:>9} {r['evaluations']:>6} {r['candidates']:>10} "
              f"{r['best_ms']:>8.3f}")
    share = bare["wall_s"] / timed["wall_s"]
    walls = ", ".join(f"{r['wall_s']:.2f}" for r in bares)
    print(f"\nzero-latency runs: {walls} s")
    print(f"one-off process startup (imports): {startup_s:.2f} s, not counted above")
    print(f"overhead per LLM call: {1000 * bare['wall_s'] / max(bare['calls'], 1):.1f} ms; "
          f"overhead share of the timed run: {100 * share:.1f}% (goal < 5%)")


if __name__ == "__main__":
    main()
