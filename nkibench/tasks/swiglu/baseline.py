"""swiglu baseline: three phases of square 128 x 128 tiles with both operand tiles loaded inside the K
loop and row-major tiles PE-transposed by nl.matmul; G and H round-trip through HBM buffers."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


def _tile_matmul(load_a, load_b, steps, T):
    """Accumulate sum_t load_a(t) @ load_b(t) for one 128 x 128 output tile; return it in SBUF."""
    acc = nl.zeros((T, T), dtype=nl.float32, buffer=nl.psum)
    for t in nl.affine_range(steps):
        acc += nl.matmul(load_a(t), load_b(t))  # row-major a: a PE transpose is inserted
    return nl.copy(acc, dtype=nl.float32)


@nki.jit
def kernel(x, w_up, w_down, w_gate):
    # x: [M/512, 4, 128, K/128, 128]; w_up, w_gate: [K/128, 128, N]; w_down: [N/128, 128, K]
    MA, MC, P, KT, _ = x.shape
    N = w_up.shape[2]
    NT = N // P
    K = KT * P
    MT = MA * MC
    T = 128  # every tile is 128 x 128
    assert N % T == 0, "swiglu baseline needs N % 128 == 0"
    out = nl.ndarray((MT, P, K), dtype=x.dtype, buffer=nl.shared_hbm)
    g_hbm = nl.ndarray((MT, P, N), dtype=x.dtype, buffer=nl.shared_hbm)  # G (M x N), larger than SBUF
    h_hbm = nl.ndarray((MT, P, N), dtype=x.dtype, buffer=nl.shared_hbm)  # H = silu(G) * U

    # Phase 1: G = x w_gate.
    for a in nl.affine_range(MA):
        for c in nl.affine_range(MC):
            for n in nl.affine_range(NT):
                g = _tile_matmul(lambda t: nl.load(x[a, c, :, t, :]),
                                 lambda t: nl.load(w_gate[t, :, n * T:(n + 1) * T]), KT, T)
                nl.store(g_hbm[a * MC + c, :, n * T:(n + 1) * T], value=g)

    # Phase 2: U = x w_up, then H = G / (1 + exp(-G)) * U, one instruction per NumPy operation.
    for a in nl.affine_range(MA):
        for c in nl.affine_range(MC):
            for n in nl.affine_range(NT):
                u = _tile_matmul(lambda t: nl.load(x[a, c, :, t, :]),
                                 lambda t: nl.load(w_up[t, :, n * T:(n + 1) * T]), KT, T)
                g = nl.load(g_hbm[a * MC + c, :, n * T:(n + 1) * T])
                e = nl.exp(nl.negative(g))
                s = nl.divide(g, nl.add(e, 1.0))
                nl.store(h_hbm[a * MC + c, :, n * T:(n + 1) * T], value=nl.multiply(s, u))

    # Phase 3: out = H w_down.
    for m in nl.affine_range(MT):
        for k in nl.affine_range(K // T):
            o = _tile_matmul(lambda t: nl.load(h_hbm[m, :, t * T:(t + 1) * T]),
                             lambda t: nl.load(w_down[t, :, k * T:(k + 1) * T]), NT, T)
            nl.store(out[m, :, k * T:(k + 1) * T], value=o)
    return out
