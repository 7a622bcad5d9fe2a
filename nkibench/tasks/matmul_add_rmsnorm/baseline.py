"""matmul_add_rmsnorm baseline: y = x w in square 128 x 128 tiles (x and w tiles loaded inside the K loop,
x tiles PE-transposed by nl.matmul), assembled per row tile in SBUF, then RMSNorm one instruction per step."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, w, eps, z, g):
    M, K = x.shape
    N = w.shape[1]
    T = 128  # every matmul tile is 128 x 128
    assert M % T == 0 and K % T == 0 and N % T == 0, "baseline needs M, K and N divisible by 128"
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    g_all = nl.load(g.reshape((1, N))).broadcast_to((T, N))
    for r in nl.affine_range(M // T):
        rows = nl.ds(r * T, T)
        y = nl.ndarray((T, N), dtype=x.dtype, buffer=nl.sbuf)
        for n in nl.affine_range(N // T):
            acc = nl.zeros((T, T), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // T):
                x_tile = nl.load(x[rows, k * T:(k + 1) * T])  # [128 m, 128 k]
                w_tile = nl.load(w[k * T:(k + 1) * T, n * T:(n + 1) * T])  # [128 k, 128 n]
                acc += nl.matmul(x_tile, w_tile)  # m on partitions: a PE transpose is inserted
            y[:, n * T:(n + 1) * T] = nl.copy(acc, dtype=x.dtype)
        zt = nl.load(z[rows, :])
        yz = nl.add(y, zt)
        sq = nl.multiply(yz, yz)
        ssum = nl.sum(sq, axis=1, keepdims=True)
        mean = nl.multiply(ssum, 1.0 / N)
        t = nl.add(mean, eps)
        inv = nl.rsqrt(t)
        yn = nl.multiply(yz, inv)
        res = nl.multiply(yn, g_all)
        nl.store(out[rows, :], value=res)
    return out
