"""Evaluation throughput (kernels per minute) for 1 and 2 workers, and the sandbox's overhead.

    python benchmarks/eval_throughput.py --task silu --kernels 12 --workers 1,2

Throughput: `--kernels` evaluations of the task's baseline through `make_backend("nkisim")`, fed
from more threads than slots so the slots never idle. Overhead: (a) a no-op kernel through the
sandbox (spawn, confinement, .npy I/O, collection), and (b) a full sandboxed evaluation minus
the same simulation and performance model run in this process (baseline code is ours, so it may
run here). Prints tables; not a test.
"""
from __future__ import annotations

import argparse
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from accelopt_graph.nkibench import load_task
from accelopt_graph.tools.backend import EvalSettings, EvalStatus
from accelopt_graph.tools.registry import make_backend
from accelopt_graph.tools.sandbox import SandboxJob, run_isolated


def throughput(task, code: str, *, workers: int, kernels: int, settings: EvalSettings,
               executor: str = "local") -> dict:
    ray_init = {"num_cpus": workers, "include_dashboard": False, "log_to_driver": False}
    backend = make_backend("nkisim", workers=workers, executor=executor,
                           ray_init=ray_init if executor == "ray" else None)
    try:
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=2 * workers) as pool:
            results = list(pool.map(lambda _: backend.evaluate(task, code, settings), range(kernels)))
        wall = time.perf_counter() - start
    finally:
        backend.close()
    bad = [r for r in results if r.status is not EvalStatus.OK]
    if bad:
        raise SystemExit(f"evaluation failed: {bad[0].status.value}: {bad[0].error}")
    return {"workers": workers, "kernels": kernels, "wall_s": wall,
            "kernels_per_min": 60 * kernels / wall,
            "mean_eval_s": statistics.fmean(r.wall_s for r in results),
            "mean_sandbox_s": statistics.fmean(r.details["sandbox"]["wall_s"] for r in results),
            "latency_ms": results[0].latency_ms}


def noop_overhead(runs: int) -> list[float]:
    x = np.ones((128, 64), np.float32)
    job = SandboxJob(code="def kernel(a):\n    return a\n", cases=[[x]], engine="python")
    return [run_isolated(job).wall_s for _ in range(runs)]


def in_process_seconds(task, code: str, settings: EvalSettings, tmp: str) -> float:
    """The same cases simulated, checked and timed in this process: what the sandbox adds to."""
    from pathlib import Path

    from accelopt_graph.tools.checks import check_case
    from accelopt_graph.tools.evaluation import plan_cases
    from accelopt_graph.tools.nkisim.frontend import load_module
    from accelopt_graph.tools.nkisim.interpreter import run_kernel
    from accelopt_graph.tools.nkisim.profile import profile_trace
    from accelopt_graph.tools.sandbox_child import array_digest

    path = Path(tmp) / "baseline_kernel.py"
    path.write_text(code)
    plan = plan_cases(task, settings.seeds)
    start = time.perf_counter()
    kernel = load_module(path).kernel
    for i, (seed, case) in enumerate(plan.pairs):
        args = task.kernel_inputs(seed, case)
        outputs, trace = run_kernel(kernel, list(args), collect_trace=i == plan.timed,
                                    hardware=settings.hardware)
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        verdict = check_case(outputs=outputs, reference=task.reference_outputs(seed, case),
                             inputs_sent=args, input_digests=[array_digest(a) for a in args],
                             rtol=task.rtol, label=str(seed))
        assert verdict.ok, verdict.error
        if i == plan.timed:
            profile_trace(trace, hardware=settings.hardware)
    return time.perf_counter() - start


def main() -> None:
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="silu")
    ap.add_argument("--reduced", action="store_true", help="use the task's small test_parameters")
    ap.add_argument("--params", default="", help="overrides, e.g. M=1024,N=2048")
    ap.add_argument("--kernels", type=int, default=12)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--seeds", default="0,21,42,63,84")
    ap.add_argument("--overhead-runs", type=int, default=10)
    ap.add_argument("--executor", choices=["local", "ray"], default="local",
                    help="ray: a local Ray instance with num_cpus = workers, started per row")
    args = ap.parse_args()
    params = {k: int(v) for k, v in (kv.split("=") for kv in args.params.split(",") if kv)}
    task = load_task(args.task, params=params or None, reduced=args.reduced)
    code = task.baseline_code
    settings = EvalSettings(seeds=tuple(int(s) for s in args.seeds.split(",")), timeout_s=600)
    import os

    print(f"task {task.name} params {task.parameters}; seeds {settings.seeds} + adversarial cases; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")

    print(f"\nexecutor: {args.executor}")
    print("| workers | kernels | wall s | kernels/min | mean evaluate() s (incl. slot wait) "
          "| mean sandbox s | simulated latency ms |")
    print("|---|---|---|---|---|---|---|")
    for w in (int(x) for x in args.workers.split(",")):
        r = throughput(task, code, workers=w, kernels=args.kernels, settings=settings,
                       executor=args.executor)
        print(f"| {w} | {r['kernels']} | {r['wall_s']:.1f} | {r['kernels_per_min']:.1f} | "
              f"{r['mean_eval_s']:.2f} | {r['mean_sandbox_s']:.2f} | {r['latency_ms']:.4f} |")

    walls = noop_overhead(args.overhead_runs)
    with tempfile.TemporaryDirectory() as tmp:
        inproc = statistics.median(in_process_seconds(task, code, settings, tmp) for _ in range(3))
    backend = make_backend("nkisim", workers=1)
    sandboxed = statistics.median(backend.evaluate(task, code, settings).wall_s for _ in range(3))
    backend.close()
    print("\n| overhead measure | seconds |")
    print("|---|---|")
    print(f"| no-op kernel through the sandbox (median of {len(walls)}) | {statistics.median(walls):.3f} |")
    print(f"| full evaluation, sandboxed (median of 3) | {sandboxed:.3f} |")
    print(f"| same inputs + simulation + checks + perf model in-process (median of 3) | {inproc:.3f} |")
    print(f"| sandbox overhead per evaluation (difference) | {sandboxed - inproc:.3f} |")


if __name__ == "__main__":
    main()
