"""One run in its own process, so a test can SIGKILL it: `python -m graph_edges.driver start|resume`.

    start CONFIG RUN_DIR   run_optimization on the marker task (tests/graph) with the marker backend
    resume RUN_DIR         resume_optimization of that run
Models come from the config (the test's fake OpenAI server); the memory store too.
$EVAL_DELAY_S makes every evaluation take that long, so a kill can land while evaluations run.
"""
from __future__ import annotations

import os
import sys
import time

from accelopt_graph.run import resume_optimization, run_optimization
from accelopt_graph.settings import Settings
from graph.conftest import MarkerTask
from graph.fakes import MarkerBackend


class SlowMarkerBackend(MarkerBackend):
    def __init__(self, delay_s: float) -> None:
        super().__init__()
        self.delay_s = delay_s

    def evaluate(self, task, code, settings):
        time.sleep(self.delay_s)
        return super().evaluate(task, code, settings)


def main(argv: list[str]) -> int:
    task = MarkerTask()
    backend = SlowMarkerBackend(float(os.environ.get("EVAL_DELAY_S", "0")))
    if argv[0] == "start":
        outcome = run_optimization(Settings.from_yaml(argv[1]), task.name, task=task, backend=backend,
                                   run_dir=argv[2])
    elif argv[0] == "resume":
        outcome = resume_optimization(argv[1], task=task, backend=backend)
    else:
        raise SystemExit(f"usage: driver start CONFIG RUN_DIR | resume RUN_DIR (got {argv})")
    print(f"finished={outcome.finished} best={outcome.summary['best']['latency_ms']}", flush=True)
    return 0 if outcome.finished else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
