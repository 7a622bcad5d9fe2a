"""Matmul baseline: square 128 x 128 output tiles; both operand tiles loaded inside the K loop; lhs tiles
transposed per call by nl.matmul. The textbook first pass, with every reuse left for the optimizer."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(lhs, rhs):
    # lhs: [M/128, 128, K/128, 128] (m = 128a + p, k = 128t + j); rhs: [K/128, 128, N] (k = 128t + p)
    MT, P, KT, _ = lhs.shape
    N = rhs.shape[2]
    T = 128  # every tile is 128 x 128
    assert N % T == 0, f"matmul baseline needs N % 128 == 0, got N={N}"
    out = nl.ndarray((MT, P, N), dtype=lhs.dtype, buffer=nl.shared_hbm)
    for a in nl.affine_range(MT):
        for n in nl.affine_range(N // T):
            acc = nl.zeros((P, T), dtype=nl.float32, buffer=nl.psum)
            for t in nl.affine_range(KT):
                lhs_tile = nl.load(lhs[a, :, t, :])  # [128 m, 128 k]
                rhs_tile = nl.load(rhs[t, :, n * T:(n + 1) * T])  # [128 k, 128 n]
                acc += nl.matmul(lhs_tile, rhs_tile)  # m on partitions: a PE transpose is inserted
            nl.store(out[a, :, n * T:(n + 1) * T], value=nl.copy(acc, dtype=lhs.dtype))
    return out
