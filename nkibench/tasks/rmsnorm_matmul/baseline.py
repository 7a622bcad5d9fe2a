"""rmsnorm_matmul baseline: statistics per 128 x 128 tile, then square 128 x 128 output tiles whose x and
w tiles are loaded inside the K loop, x tiles re-scaled and (by nl.matmul) PE-transposed per output tile."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, w):
    # x: [M/128, 128, K] (m = 128a + p); w: [K/128, 128, N] (k = 128t + p)
    MT, P, K = x.shape
    KT, _, N = w.shape
    T = 128  # every tile is 128 x 128
    assert N % T == 0 and K % T == 0, "rmsnorm_matmul baseline needs N and K divisible by 128"
    out = nl.ndarray((MT, P, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for a in nl.affine_range(MT):
        # mean of squares: square, multiply by 1/K, reduce, one tile at a time, partial sums added up
        xt = nl.load(x[a])
        ms = None
        for t in nl.static_range(KT):
            piece = xt[:, t * T:(t + 1) * T]
            sq = nl.multiply(piece, piece)
            sq = nl.multiply(sq, 1.0 / K)
            part = nl.sum(sq, axis=1, keepdims=True)
            ms = part if ms is None else nl.add(ms, part)
        inv = nl.rsqrt(ms)
        for n in nl.affine_range(N // T):
            acc = nl.zeros((P, T), dtype=nl.float32, buffer=nl.psum)
            for t in nl.affine_range(KT):
                x_tile = nl.multiply(nl.load(x[a, :, t * T:(t + 1) * T]), inv)  # [128 m, 128 k], normalised
                w_tile = nl.load(w[t, :, n * T:(n + 1) * T])  # [128 k, 128 n]
                acc += nl.matmul(x_tile, w_tile)  # m on partitions: a PE transpose is inserted
            nl.store(out[a, :, n * T:(n + 1) * T], value=nl.copy(acc, dtype=x.dtype))
    return out
