"""Full-size cost of the NKIBench oracles: input generation and reference time, cached bytes.

Prints one row per task (what the oracle cache holds for one (seed, case) and how long a miss
costs), so the cache bound (`ORACLE_CACHE.max_bytes`) can be chosen. Run:
    python benchmarks/bench_nkibench_oracles.py [task ...]
"""
from __future__ import annotations

import resource
import sys
import time

from accelopt_graph.nkibench import list_tasks, load_task
from accelopt_graph.nkibench.cache import ORACLE_CACHE


def main(names: list[str]) -> None:
    print(f"{'task':24s} {'inputs MiB':>10s} {'outputs MiB':>11s} {'gen s':>7s} {'ref s':>7s} {'peak RSS GiB':>12s}")
    for name in names or list_tasks():
        ORACLE_CACHE.clear()
        task = load_task(name)
        t0 = time.perf_counter()
        inputs = task.numpy_inputs(task.bench_seed)
        t1 = time.perf_counter()
        refs = task.reference_outputs(task.bench_seed)
        t2 = time.perf_counter()
        in_mib = sum(getattr(a, "nbytes", 0) for a in inputs) / 2**20
        out_mib = sum(r.nbytes for r in refs) / 2**20
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        print(f"{name:24s} {in_mib:10.1f} {out_mib:11.1f} {t1 - t0:7.2f} {t2 - t1:7.2f} {rss:12.2f}")
        del inputs, refs
    ORACLE_CACHE.clear()


if __name__ == "__main__":
    main(sys.argv[1:])
