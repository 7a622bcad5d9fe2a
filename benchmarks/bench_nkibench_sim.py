"""Full-size NKIBench baselines in the simulator, in process (our own trusted kernels only).

A quicker look than `accelopt bench` (no sandbox, no file transfer): per task, correctness on the
bench seed, the performance model's latency, % of peak, and where the wall time goes. Run:
    python benchmarks/bench_nkibench_sim.py [--hardware trn2] [task ...]
"""
from __future__ import annotations

import argparse
import resource
import time

from accelopt_graph.nkibench import geomean, list_tasks, load_task
from accelopt_graph.nkibench.cache import ORACLE_CACHE
from accelopt_graph.tools.nkisim import load_module, profile_kernel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="*")
    parser.add_argument("--hardware", default="trn1")
    args = parser.parse_args()
    fractions = []
    print(f"{'task':24s} {'ok':>3s} {'rel L2':>8s} {'latency ms':>11s} {'peak ms':>8s} {'% peak':>7s} "
          f"{'sim s':>6s} {'ref+check s':>11s} {'max RSS GiB':>11s}")
    for name in args.tasks or list_tasks():
        ORACLE_CACHE.clear()
        task = load_task(name)
        inputs = task.kernel_inputs(task.bench_seed)
        kernel = load_module(str(task.baseline_path)).kernel
        t0 = time.perf_counter()
        outputs, profile = profile_kernel(kernel, *inputs, hardware=args.hardware)
        t1 = time.perf_counter()
        verdict = task.check(outputs, task.bench_seed)
        t2 = time.perf_counter()
        peak = task.peak_latency_ms(args.hardware)
        fraction = peak / profile.latency_ms
        if verdict.ok:
            fractions.append(fraction)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        print(f"{name:24s} {'yes' if verdict.ok else 'NO':>3s} {verdict.rel_l2 or 0:8.1e} {profile.latency_ms:11.4f} "
              f"{peak:8.4f} {100 * fraction:7.1f} {t1 - t0:6.1f} {t2 - t1:11.1f} {rss:11.1f}", flush=True)
        del outputs, inputs
    if fractions:
        print(f"geomean % of peak (simulated, {args.hardware}): {100 * geomean(fractions):.1f} "
              f"over {len(fractions)} correct tasks")


if __name__ == "__main__":
    main()
