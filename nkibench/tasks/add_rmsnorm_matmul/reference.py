"""NumPy oracle of add_rmsnorm_matmul (nkibench.md §3.2)."""
import numpy as np


def forward(x, w, eps, z, g):
    f = np.float32
    K = x.shape[1]
    y = x + z
    t = np.sum(y * y / f(K), axis=1, keepdims=True)
    t = (t + f(eps)).astype(np.float32)
    return ((y / np.sqrt(t)) * g[None, :]) @ w


def make_small_rows(rng, params, case):
    """One row in eight gets z = -x + N(0, 1e-3^2): its mean square falls below eps."""
    M, N, K = params["M"], params["N"], params["K"]
    x = rng.standard_normal((M, K), dtype=np.float32)
    w = rng.standard_normal((K, N), dtype=np.float32)
    z = rng.standard_normal((M, K), dtype=np.float32)
    g = rng.standard_normal((K,), dtype=np.float32)
    rows = np.arange(3, M, 8)
    z[rows] = -x[rows] + np.float32(1e-3) * rng.standard_normal((rows.size, K), dtype=np.float32)
    return [x, w, 1e-5, z, g]
