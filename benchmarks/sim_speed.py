"""Speed of the NKI CPU simulator on the NKIBench baselines (a benchmark script, not a test).

For each task: seconds to simulate the baseline kernel (functional + trace, and trace-only), the
NumPy reference forward on the same inputs, their ratio, and the peak RSS of the process. Each task
runs in its own subprocess so its peak RSS is its own.

    python benchmarks/sim_speed.py                  # all tasks, full NKIBench size
    python benchmarks/sim_speed.py --tasks matmul silu --reduced
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def measure_reference(name: str, reduced: bool) -> dict:
    """The NumPy reference forward on the same inputs (its own process: its RSS is not ours)."""
    from accelopt_graph.nkibench import load_task

    task = load_task(name, reduced=reduced)
    numpy_inputs = task.numpy_inputs(0)
    t = time.perf_counter()
    task.forward(*numpy_inputs)
    return {"ref_s": time.perf_counter() - t}


def _timed(fn) -> tuple[float, float]:
    t, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t, time.process_time() - c


def measure(name: str, reduced: bool) -> dict:
    from accelopt_graph.nkibench import load_task
    from accelopt_graph.tools import nkisim

    task = load_task(name, reduced=reduced)
    module = nkisim.load_module(task.directory / "baseline.py")
    args = task.kernel_inputs(0)
    # untimed warm-up: the first run of a process pays one-off costs (page faults of fresh
    # allocations, BLAS start-up) that would otherwise be charged to whichever mode runs first
    nkisim.run_kernel(module.kernel, args, collect_trace=False)

    t, c = time.perf_counter(), time.process_time()
    res = nkisim.run_kernel(module.kernel, args, collect_trace=True, compute=True)
    sim_s, sim_cpu = time.perf_counter() - t, time.process_time() - c
    outs = res.outputs if isinstance(res.outputs, (list, tuple)) else [res.outputs]
    n_events = len(res.trace)
    del res
    # peak RSS of one simulation: inputs + the run + its outputs (the runs below only repeat it)
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20

    tmp = f"{tempfile.gettempdir()}/sim_speed_{name}_{os.getpid()}.npz"
    np.savez(tmp, *outs)  # parked on disk so the timed runs below do not hold them
    del outs
    func_s, func_cpu = _timed(lambda: nkisim.run_kernel(module.kernel, args, collect_trace=False))
    trace_s, trace_cpu = _timed(lambda: nkisim.run_kernel(module.kernel, args, compute=False))
    with np.load(tmp) as saved:
        outs = [saved[f"arr_{i}"] for i in range(len(saved.files))]
    os.remove(tmp)
    refs = task.reference_outputs(0)
    rel_l2 = max(float(np.linalg.norm(np.asarray(o, np.float64).reshape(r.shape) - r)
                       / np.linalg.norm(r)) for o, r in zip(outs, refs))
    return {"task": name, "events": n_events, "sim_s": sim_s, "sim_cpu_s": sim_cpu,
            "functional_s": func_s, "functional_cpu_s": func_cpu, "trace_only_s": trace_s,
            "trace_only_cpu_s": trace_cpu, "ok": bool(rel_l2 < task.rtol), "rel_l2": rel_l2,
            "peak_rss_gib": peak_rss}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", nargs="*", default=None)
    ap.add_argument("--reduced", action="store_true", help="the small CI shapes instead of full size")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--ref", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--json", help="also write the rows to this file")
    a = ap.parse_args()
    if a.one:
        print(json.dumps((measure_reference if a.ref else measure)(a.one, a.reduced)))
        return
    from accelopt_graph.nkibench import list_tasks
    names = a.tasks or list_tasks()
    rows = []
    for name in names:
        cmd = [sys.executable, __file__, "--one", name] + (["--reduced"] if a.reduced else [])
        p = subprocess.run(cmd, capture_output=True, text=True)
        q = subprocess.run(cmd + ["--ref"], capture_output=True, text=True)
        if p.returncode != 0 or q.returncode != 0:
            print(f"{name}: FAILED\n{p.stderr[-2000:]}{q.stderr[-2000:]}", file=sys.stderr)
            continue
        rows.append({**json.loads(p.stdout.strip().splitlines()[-1]),
                     **json.loads(q.stdout.strip().splitlines()[-1])})
        r = rows[-1]
        print(f"  done {name}: sim {r['sim_s']:.2f}s ref {r['ref_s']:.3f}s", file=sys.stderr)
    print(f"machine: {platform.machine()} {platform.processor() or ''} cpus={__import__('os').cpu_count()}"
          f" python {platform.python_version()} numpy {np.__version__}; size: "
          f"{'reduced' if a.reduced else 'full NKIBench'}")
    print("| task | events | sim+trace s | numpy ref s | ratio | functional CPU s | "
          "+trace CPU | trace-only CPU s | trace-only speedup | peak RSS GiB | correct |")
    print("|" + "---|" * 11)
    for r in rows:
        ratio = r["sim_s"] / max(r["ref_s"], 1e-9)
        r["ratio"] = ratio
        print(f"| {r['task']} | {r['events']} | {r['sim_s']:.2f} | {r['ref_s']:.3f} | {ratio:.1f}x | "
              f"{r['functional_cpu_s']:.2f} | "
              f"{100 * (r['sim_cpu_s'] / max(r['functional_cpu_s'], 1e-9) - 1):+.0f}% | "
              f"{r['trace_only_cpu_s']:.2f} | "
              f"{r['sim_cpu_s'] / max(r['trace_only_cpu_s'], 1e-9):.1f}x | "
              f"{r['peak_rss_gib']:.2f} | {'yes' if r['ok'] else 'NO'} |")
    if rows:
        ratios = [r["ratio"] for r in rows]
        print(f"\nmedian ratio {statistics.median(ratios):.1f}x, max {max(ratios):.1f}x, "
              f"max peak RSS {max(r['peak_rss_gib'] for r in rows):.2f} GiB")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
