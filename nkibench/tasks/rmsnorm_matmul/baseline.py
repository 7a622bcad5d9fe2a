"""rmsnorm_matmul baseline: statistics per 512-wide half, second load of x, PE transposes, K-accumulated matmuls."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, w):
    # x: [M/128, 128, K] (m = 128a + p); w: [K/128, 128, N] (k = 128t + p)
    MT, P, K = x.shape
    KT, _, N = w.shape
    NS = 512  # one PSUM bank of fp32
    GROUP = 8  # row tiles sharing one load of w
    RW = 512 if K % 512 == 0 else K  # width of one partial sum of squares
    assert N % NS == 0 and K % P == 0, "baseline needs N % 512 == 0 and K % 128 == 0"
    out = nl.ndarray((MT, P, N), dtype=x.dtype, buffer=nl.shared_hbm)
    groups = (MT + GROUP - 1) // GROUP
    per_group = min(GROUP, MT)
    assert MT % per_group == 0, "baseline needs M/128 to be a multiple of 8 (or below 8)"
    for gi in nl.affine_range(groups):
        w_sb = nl.ndarray((KT, nl.par_dim(P), N), dtype=w.dtype, buffer=nl.sbuf)
        for t in nl.affine_range(KT):
            w_sb[t] = nl.load(w[t])
        for ri in nl.affine_range(per_group):
            a = gi * per_group + ri
            xt = nl.load(x[a])
            sq = nl.multiply(xt, xt)
            sq = nl.multiply(sq, 1.0 / K)
            ms = nl.sum(sq[:, 0:RW], axis=1, keepdims=True)  # reduce per 512-wide part, then combine
            for h in nl.static_range(1, K // RW):
                ms = nl.add(ms, nl.sum(sq[:, h * RW:(h + 1) * RW], axis=1, keepdims=True))
            inv = nl.rsqrt(ms)
            x2 = nl.load(x[a])
            xn = nl.multiply(x2, inv)
            xn_t = nl.ndarray((KT, nl.par_dim(P), P), dtype=x.dtype, buffer=nl.sbuf)
            for t in nl.affine_range(KT):
                xn_t[t] = nl.copy(nisa.nc_transpose(xn[:, t * P:(t + 1) * P]), dtype=x.dtype)
            for c in nl.affine_range(N // NS):
                acc = nl.zeros((P, NS), dtype=nl.float32, buffer=nl.psum)
                for t in nl.affine_range(KT):
                    acc += nisa.nc_matmul(xn_t[t], w_sb[t, :, c * NS:(c + 1) * NS])
                nl.store(out[a, :, c * NS:(c + 1) * NS], value=nl.copy(acc, dtype=x.dtype))
    return out
