"""transpose_matmul baseline: square 128 x 128 output tiles (the last column tile masked); both operand
tiles loaded inside the K loop. lhs_t slices are stationary as they are, so no transposes."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(lhs_t, rhs):
    # lhs_t: [128, K/128, M], rhs: [128, K/128, N], both with k = (K/128) p + j
    P, KT, M = lhs_t.shape
    N = rhs.shape[2]
    T = 128  # every tile is 128 x 128
    assert M % T == 0, f"transpose_matmul baseline needs M % 128 == 0, got M={M}"
    out = nl.ndarray((M // P, P, N), dtype=lhs_t.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(P)[:, None]
    i_f = nl.arange(T)[None, :]
    for a in nl.affine_range(M // T):
        for n in nl.affine_range((N + T - 1) // T):
            cols = n * T + i_f
            acc = nl.zeros((P, T), dtype=nl.float32, buffer=nl.psum)
            for j in nl.affine_range(KT):
                lhs_tile = nl.load(lhs_t[:, j, a * T:(a + 1) * T])  # [128 k, 128 m]
                rhs_tile = nl.load(rhs[i_p, j, cols], mask=(cols < N))  # [128 k, 128 n]
                acc += nisa.nc_matmul(lhs_tile, rhs_tile, mask=(cols < N))
            res = nl.copy(acc, dtype=lhs_t.dtype, mask=(cols < N))
            nl.store(out[a, i_p, cols], value=res, mask=(cols < N))
    return out
