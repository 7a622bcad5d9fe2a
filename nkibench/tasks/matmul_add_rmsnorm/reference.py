"""NumPy oracle of matmul_add_rmsnorm (nkibench.md §3.9)."""
import numpy as np


def forward(x, w, eps, z, g):
    y = x @ w + z
    rms = np.sqrt(np.mean(y * y, axis=1, keepdims=True) + np.float32(eps))
    return (y * g[None, :]) / rms


def make_small_rows(rng, params, case):
    """One row in eight gets x * 1e-5 and z * 1e-3: its mean square (~1.2e-6) falls below eps."""
    M, N, K = params["M"], params["N"], params["K"]
    x = rng.standard_normal((M, K), dtype=np.float32)
    w = rng.standard_normal((K, N), dtype=np.float32)
    z = rng.standard_normal((M, N), dtype=np.float32)
    g = rng.standard_normal((N,), dtype=np.float32)
    rows = np.arange(5, M, 8)
    x[rows] *= np.float32(1e-5)
    z[rows] *= np.float32(1e-3)
    return [x, w, 1e-5, z, g]
