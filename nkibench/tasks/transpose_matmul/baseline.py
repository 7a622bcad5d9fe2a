"""transpose_matmul baseline: square 128 x 128 output tiles (plus one narrower tail column tile when
N % 128 != 0); both operand tiles loaded inside the K loop. lhs_t slices are stationary as they are."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


def _tile(lhs_t, rhs, out, a, n0, width, KT, T):
    """One 128 x width output tile: K/128 steps of (load both tiles, accumulate), a PSUM copy, a store."""
    acc = nl.zeros((T, width), dtype=nl.float32, buffer=nl.psum)
    for j in nl.affine_range(KT):
        lhs_tile = nl.load(lhs_t[:, j, a * T:(a + 1) * T])  # [128 k, 128 m]
        rhs_tile = nl.load(rhs[:, j, n0:n0 + width])  # [128 k, width n]
        acc += nisa.nc_matmul(lhs_tile, rhs_tile)
    nl.store(out[a, :, n0:n0 + width], value=nl.copy(acc, dtype=out.dtype))


@nki.jit
def kernel(lhs_t, rhs):
    # lhs_t: [128, K/128, M], rhs: [128, K/128, N], both with k = (K/128) p + j
    P, KT, M = lhs_t.shape
    N = rhs.shape[2]
    T = 128  # every tile is 128 x 128
    assert M % T == 0, f"transpose_matmul baseline needs M % 128 == 0, got M={M}"
    out = nl.ndarray((M // P, P, N), dtype=lhs_t.dtype, buffer=nl.shared_hbm)
    for a in nl.affine_range(M // T):
        for n in nl.affine_range(N // T):
            _tile(lhs_t, rhs, out, a, n * T, T, KT, T)
        if N % T:
            _tile(lhs_t, rhs, out, a, (N // T) * T, N % T, KT, T)
    return out
