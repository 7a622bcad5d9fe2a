"""NumPy oracle of rmsnorm_matmul (nkibench.md §3.10): no eps, no gain."""
import numpy as np


def forward(x, w):
    K = x.shape[1]
    r = np.sqrt(np.sum(x * x / np.float32(K), axis=1, keepdims=True))
    return (x / r) @ w


def make_small_rows(rng, params, case):
    """One row in eight scaled by 1e-3: a kernel that adds any eps errs by ~0.24."""
    M, N, K = params["M"], params["N"], params["K"]
    x = rng.standard_normal((M, K), dtype=np.float32)
    w = rng.standard_normal((K, N), dtype=np.float32)
    x[np.arange(1, M, 8)] *= np.float32(1e-3)
    return [x, w]
