"""swiglu baseline: G^T, then U^T, in N chunks with x re-transposed per chunk; H^T via HBM scratch; H w_down."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


def _x_transposed(x, a, MC, KT, P):
    """Load the 512-row block a of x and PE-transpose it: [K/128][128 k, 512 m] (each block copied out of PSUM)."""
    x_t = nl.ndarray((KT, nl.par_dim(P), MC * P), dtype=x.dtype, buffer=nl.sbuf)
    for b in nl.affine_range(MC):
        xr = nl.load(x[a, b])  # [128 rows, K/128, 128]
        for t in nl.affine_range(KT):
            x_t[t, :, b * P:(b + 1) * P] = nl.copy(nisa.nc_transpose(xr[:, t, :]), dtype=x.dtype)
    return x_t


def _chunk_t(x, nt, x_t, KT, P, w_sb):
    """One [128 n, 512 m] tile of (x w)^T for the n tile nt of chunk c: K/128 accumulating matmuls."""
    acc = nl.zeros((P, x_t.shape[2]), dtype=nl.float32, buffer=nl.psum)
    for t in nl.affine_range(KT):
        acc += nisa.nc_matmul(w_sb[t, :, nt * P:(nt + 1) * P], x_t[t])
    return nl.copy(acc, dtype=x.dtype)


@nki.jit
def kernel(x, w_up, w_down, w_gate):
    # x: [M/512, 4, 128, K/128, 128]; w_up, w_gate: [K/128, 128, N]; w_down: [N/128, 128, K]
    MA, MC, P, KT, _ = x.shape
    N = w_up.shape[2]
    NT = N // P
    K = KT * P
    MT = MA * MC
    MW = MC * P  # rows per block (moving width)
    NS = 512  # one PSUM bank of fp32
    NW = 1024 if N % 1024 == 0 else P  # N chunk per pass over x
    KW = NS if K % NS == 0 else P  # output chunk of phase 3
    assert N % P == 0, "baseline needs N % 128 == 0"
    out = nl.ndarray((MT, P, K), dtype=x.dtype, buffer=nl.shared_hbm)
    g_t = nl.ndarray((NT, P, MA * MW), dtype=x.dtype, buffer=nl.shared_hbm)  # G^T (n = 128t + p), spilled
    h_t = nl.ndarray((NT, P, MA * MW), dtype=x.dtype, buffer=nl.shared_hbm)  # scratch: H^T = (silu(G) * U)^T

    # Phase 1: G^T in N chunks; x is PE-transposed again for every chunk.
    for c in nl.affine_range(N // NW):
        wg = nl.ndarray((KT, nl.par_dim(P), NW), dtype=x.dtype, buffer=nl.sbuf)
        for t in nl.affine_range(KT):
            wg[t] = nl.load(w_gate[t, :, c * NW:(c + 1) * NW])
        for a in nl.affine_range(MA):
            x_t = _x_transposed(x, a, MC, KT, P)
            for nt in nl.affine_range(NW // P):
                gt = _chunk_t(x, nt, x_t, KT, P, wg)
                nl.store(g_t[c * (NW // P) + nt, :, a * MW:(a + 1) * MW], value=gt)

    # Phase 2: U^T the same way; reload G^T, silu as four instructions, times U, store H^T.
    for c in nl.affine_range(N // NW):
        wu = nl.ndarray((KT, nl.par_dim(P), NW), dtype=x.dtype, buffer=nl.sbuf)
        for t in nl.affine_range(KT):
            wu[t] = nl.load(w_up[t, :, c * NW:(c + 1) * NW])
        for a in nl.affine_range(MA):
            x_t = _x_transposed(x, a, MC, KT, P)
            for nt in nl.affine_range(NW // P):
                ut = _chunk_t(x, nt, x_t, KT, P, wu)
                gt = nl.load(g_t[c * (NW // P) + nt, :, a * MW:(a + 1) * MW])
                e = nisa.activation(op=nl.exp, data=gt, scale=-1.0)
                d = nl.add(e, 1.0)
                r = nl.reciprocal(d)
                sg = nl.multiply(gt, r)
                nl.store(h_t[c * (NW // P) + nt, :, a * MW:(a + 1) * MW], value=nl.multiply(sg, ut))

    # Phase 3: reload H^T (its blocks serve as stationary) and accumulate H w_down per output chunk.
    for m in nl.affine_range(MT):
        hs = nl.ndarray((NT, nl.par_dim(P), P), dtype=x.dtype, buffer=nl.sbuf)
        for t in nl.affine_range(NT):
            hs[t] = nl.load(h_t[t, :, m * P:(m + 1) * P])
        for k in nl.affine_range(K // KW):
            acc = nl.zeros((P, KW), dtype=nl.float32, buffer=nl.psum)
            for t in nl.affine_range(NT):
                wd = nl.load(w_down[t, :, k * KW:(k + 1) * KW])
                acc += nisa.nc_matmul(hs[t], wd)
            nl.store(out[m, :, k * KW:(k + 1) * KW], value=nl.copy(acc, dtype=x.dtype))
    return out
