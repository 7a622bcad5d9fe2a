"""`accelopt task new NAME`: a minimal, valid task directory to start a user's own task from."""
from __future__ import annotations

from pathlib import Path

_TASK_YAML = """\
name: {name}
version: 1
family: elementwise
description: >
  TODO: one paragraph the planner and executor see verbatim. This scaffold computes
  out = x * y + x elementwise on (M, N) float32 matrices.
parameters: {{M: 1024, N: 2048}}
test_parameters: {{M: 256, N: 512}}
inputs:
  - {{name: x, shape: [M, N]}}
  - {{name: y, shape: [M, N]}}
outputs:
  - {{name: out, shape: [M, N]}}
layout: {{}}  # kernel arguments keep the NumPy shapes; add kernel_shape entries to pre-tile them
check: {{rtol: 2.0e-5, seeds: [0, 21, 42, 63, 84], bench_seed: 84}}
adversarial: []
peak:
  vec_flops: {{formula: 2*M*N, value: {vec}}}
  mm_flops: {{formula: 0, value: 0}}
  bytes: {{formula: 12*M*N, value: {bytes}}}
  bound: {{trn1: memory, trn2: memory}}
baseline:
  file: baseline.py
  provenance: scaffold
  structure: "128 x 512 tiles: load x and y, multiply, add, store"
  inefficiencies: ["two instructions where one scalar_tensor_tensor would do"]
"""

_REFERENCE = '''\
"""NumPy oracle of {name}: sizes come from the input shapes, never from module constants."""
import numpy as np


def forward(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return x * y + x
'''

_BASELINE = '''\
"""{name} baseline: one tile at a time, one instruction per operation."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, y):
    M, N = x.shape
    W = 512
    assert M % 128 == 0 and N % W == 0, "baseline needs M % 128 == 0 and N % 512 == 0"
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for r in nl.affine_range(M // 128):
        for c in nl.affine_range(N // W):
            xt = nl.load(x[r * 128:(r + 1) * 128, c * W:(c + 1) * W])
            yt = nl.load(y[r * 128:(r + 1) * 128, c * W:(c + 1) * W])
            prod = nl.multiply(xt, yt)
            nl.store(out[r * 128:(r + 1) * 128, c * W:(c + 1) * W], value=nl.add(prod, xt))
    return out
'''


def scaffold_task(name: str, root: Path) -> Path:
    """Write `root/name/` with task.yaml, reference.py and baseline.py; refuse to overwrite."""
    directory = Path(root) / name
    if directory.exists():
        raise FileExistsError(f"{directory} already exists; pick another name or remove it")
    if not name.replace("_", "").isalnum() or not name.islower():
        raise ValueError(f"task name {name!r}: use lower-case letters, digits and underscores")
    directory.mkdir(parents=True)
    M, N = 1024, 2048
    (directory / "task.yaml").write_text(_TASK_YAML.format(name=name, vec=2 * M * N, bytes=12 * M * N))
    (directory / "reference.py").write_text(_REFERENCE.format(name=name))
    (directory / "baseline.py").write_text(_BASELINE.format(name=name))
    return directory
