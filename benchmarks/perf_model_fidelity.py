"""Fidelity of the performance model against real Trn1 measurements of AccelOpt's NKIBench kernels.

AccelOpt (github.com/zhang677/AccelOpt, commit 2dbeab4) publishes its baseline kernels
(`NKIBench/kernels/*.py`) and their measured Trn1 profiles (`experiments/full_complete_local/
profile_results.csv`, `latency` in ms = neuron-profile total_time, mean of 10 runs). Neither is
vendored here: point this script at a checkout. It times each kernel with the model (trace-only;
zero inputs, the timing does not depend on values) and prints estimate vs measurement.

    git clone https://github.com/zhang677/AccelOpt /tmp/AccelOpt
    python benchmarks/perf_model_fidelity.py --accelopt /tmp/AccelOpt [--tasks silu,bmm]
"""
from __future__ import annotations

import argparse
import csv
import json
import statistics
import time
from pathlib import Path

import numpy as np

from accelopt_graph.tools.nkisim import load_module, profile_kernel

# Kernel arguments, read off each upstream kernel's indexing (upstream passes pre-tiled arrays):
# a shape for an array argument, a float for a scalar one.
INPUT_SHAPES: dict[str, list[tuple[int, ...] | float]] = {
    "silu": [(128, 32, 7168)],
    "adamw": [(10944, 2048)] * 4,
    "rmsnorm_matmul": [(32, 128, 1024), (8, 128, 2048)],
    "transpose_matmul": [(128, 16, 4096), (128, 16, 10944)],
    "bmm": [(16, 4096, 64), (16, 64, 4096)],
    "matmul": [(32, 128, 40, 128), (40, 128, 12288)],
    "rope_single_freq_apply": [(128, 64 * 4096), (64, 64 * 4096), (64, 64 * 4096)],
    "add_rmsnorm_matmul": [(4096, 1024), (1024, 2048), 1e-6, (4096, 1024), (1024,)],
    "matmul_add_rmsnorm": [(4096, 2048), (2048, 2048), 1e-6, (4096, 2048), (2048,)],
    "mamba": [(256, 7168), (256, 7168), (256, 16), (16, 7168), (16, 7168)],
}


def measured_latencies(csv_path: Path) -> dict[str, tuple[str, float]]:
    """problem -> (kernel file name, measured latency ms) from upstream's profile_results.csv."""
    out = {}
    with csv_path.open() as f:
        for row in csv.DictReader(f):
            out[row["problem"]] = (Path(row["kernel"]).name, float(json.loads(row["profile"])["latency"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--accelopt", type=Path, required=True, help="checkout of zhang677/AccelOpt")
    ap.add_argument("--tasks", default=",".join(INPUT_SHAPES))
    args = ap.parse_args()
    measured = measured_latencies(args.accelopt / "experiments/full_complete_local/profile_results.csv")
    errors = []
    print(f"{'task':18s} {'estimate ms':>12s} {'measured ms':>12s} {'error':>8s}  bottleneck")
    for name in [t for t in args.tasks.split(",") if t]:
        if name not in INPUT_SHAPES:
            raise SystemExit(f"no input shapes recorded for {name!r}; known: {sorted(INPUT_SHAPES)}")
        file, ms = measured[name]
        kernel = load_module(args.accelopt / "NKIBench/kernels" / file).kernel
        t0 = time.perf_counter()
        inputs = [s if isinstance(s, float) else np.zeros(s, np.float32) for s in INPUT_SHAPES[name]]
        _, p = profile_kernel(kernel, *inputs, hardware="trn1", trace_only=True)
        err = p.latency_ms / ms - 1
        errors.append(abs(err))
        print(f"{name:18s} {p.latency_ms:12.3f} {ms:12.3f} {100 * err:+7.1f}%  {p.bottleneck}"
              f"  ({p.events} events, {time.perf_counter() - t0:.0f} s)", flush=True)
    print(f"median |error| {100 * statistics.median(errors):.1f}% over {len(errors)} kernels (target <= 25%)")


if __name__ == "__main__":
    main()
