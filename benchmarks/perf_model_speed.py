"""Cost of timing: trace-only screening vs a functional run, and the overhead of the model on top.

Issue 3 targets: trace-only at least 5x faster than full simulation on matmul-class kernels; timing on
top of a functional run at most 30% extra. Prints, per task (baseline kernel):
  functional s   run_kernel with arithmetic, no trace (what correctness checking costs anyway)
  profiled s     profile_kernel: functional run + trace + performance model
  trace-only s   profile_kernel(trace_only=True)
Each figure is the best of --repeat runs (wall clock, this machine).

    python benchmarks/perf_model_speed.py [--tasks matmul,bmm] [--params M=1024,N=2048,K=1024] [--repeat 2]
"""
from __future__ import annotations

import argparse
import time

from accelopt_graph.nkibench import load_task
from accelopt_graph.tools.nkisim import load_module, profile_kernel, run_kernel


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default="matmul,rmsnorm_matmul,bmm,transpose_matmul")
    ap.add_argument("--params", default="", help="override parameters, e.g. M=1024,N=2048,K=1024")
    ap.add_argument("--full", action="store_true", help="use the tasks' full sizes (slow)")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    override = {k: int(v) for k, v in (kv.split("=") for kv in args.params.split(",") if kv)}
    print(f"{'task':20s} {'events':>7s} {'functional s':>12s} {'profiled s':>11s} {'trace-only s':>12s} "
          f"{'speedup':>8s} {'overhead':>9s}")
    for name in [t for t in args.tasks.split(",") if t]:
        task = load_task(name, reduced=not args.full and not override,
                         params={k: v for k, v in override.items() if k in load_task(name).parameters} or None)
        kernel = load_module(task.baseline_path).kernel
        inputs = task.kernel_inputs(task.bench_seed)
        functional = _best(lambda: run_kernel(kernel, inputs, collect_trace=False, enforce_capacity=False),
                           args.repeat)
        profiled = _best(lambda: profile_kernel(kernel, *inputs), args.repeat)
        trace_only = _best(lambda: profile_kernel(kernel, *inputs, trace_only=True), args.repeat)
        events = profile_kernel(kernel, *inputs, trace_only=True)[1].events
        print(f"{name:20s} {events:7d} {functional:12.3f} {profiled:11.3f} {trace_only:12.3f} "
              f"{functional / trace_only:7.1f}x {100 * (profiled / functional - 1):8.0f}%  {task.parameters}",
              flush=True)


if __name__ == "__main__":
    main()
