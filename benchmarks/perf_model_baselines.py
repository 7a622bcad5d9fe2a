"""Time every NKIBench baseline kernel with the performance model (trace-only, full task sizes).

Prints one row per task: trace length, wall time of the trace-only simulation and of the model, the
estimated latency, the task's peak latency, % of peak and the model's bottleneck. All latencies are
simulator estimates, not measurements.

    python benchmarks/perf_model_baselines.py [--hardware trn1] [--tasks silu,matmul] [--reduced]

The last line lists the baselines at or above `--headroom-bar` % of peak (default 70, issue 4's bar:
every baseline must leave the optimizer room).
"""
from __future__ import annotations

import argparse
import time

from accelopt_graph.nkibench import list_tasks, load_task
from accelopt_graph.tools.nkisim import load_module, profile_kernel


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hardware", default="trn1")
    ap.add_argument("--tasks", default="")
    ap.add_argument("--reduced", action="store_true", help="use each task's small test parameters")
    ap.add_argument("--headroom-bar", type=float, default=70.0, help="flag baselines at or above this %% of peak")
    args = ap.parse_args()
    names = [t for t in args.tasks.split(",") if t] or list_tasks()
    print(f"{'task':24s} {'events':>8s} {'sim s':>7s} {'model s':>8s} {'latency ms':>11s} "
          f"{'peak ms':>9s} {'% peak':>7s} {'spill MB':>9s}  bottleneck")
    above: list[str] = []
    for name in names:
        task = load_task(name, reduced=args.reduced)
        kernel = load_module(task.baseline_path).kernel
        inputs = task.kernel_inputs(task.bench_seed)  # trace-only: values do not change the timing
        t0 = time.perf_counter()
        try:
            _, p = profile_kernel(kernel, *inputs, hardware=args.hardware, trace_only=True)
        except Exception as e:  # noqa: BLE001 - a benchmark row, not a crash
            print(f"{name:24s} failed: {type(e).__name__}: {str(e)[:200]}")
            continue
        peak = task.peak_latency_ms(args.hardware)
        if 100 * peak / p.latency_ms >= args.headroom_bar:
            above.append(f"{name} {100 * peak / p.latency_ms:.1f}%")
        spill = (p.counters["spill_save_bytes"] + p.counters["spill_reload_bytes"]) / 1e6
        print(f"{name:24s} {p.events:8d} {p.simulate_s:7.2f} {p.model_s:8.2f} {p.latency_ms:11.4f} "
              f"{peak:9.4f} {100 * peak / p.latency_ms:7.1f} {spill:9.1f}  {p.bottleneck}"
              f"  (wall {time.perf_counter() - t0:.1f} s)", flush=True)
    print(f"at or above {args.headroom_bar:g}% of peak (simulated): {', '.join(above) or 'none'}")


if __name__ == "__main__":
    main()
