"""Matmul rewrite 2: pre-transposed lhs and 512-wide rhs stripes, so matmuls start after a smaller load."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(lhs, rhs):
    MT, P, KT, _ = lhs.shape
    N = rhs.shape[2]
    out = nl.ndarray((MT, P, N), dtype=lhs.dtype, buffer=nl.shared_hbm)
    NW = 512  # narrower N chunks: the first matmuls start after a smaller rhs load
    NS = 512  # one PSUM bank of fp32
    lhs_t = nl.ndarray((MT, KT, nl.par_dim(P), P), dtype=lhs.dtype, buffer=nl.sbuf)
    for a in nl.affine_range(MT):
        lhs_rows = nl.load(lhs[a])
        for t in nl.affine_range(KT):
            lhs_t[a, t] = nl.copy(nisa.nc_transpose(lhs_rows[:, t, :]), dtype=lhs.dtype)
    for n in nl.affine_range(N // NW):
        rhs_stripe = nl.ndarray((KT, nl.par_dim(P), NW), dtype=rhs.dtype, buffer=nl.sbuf)
        for t in nl.affine_range(KT):
            rhs_stripe[t] = nl.load(rhs[t, :, n * NW:(n + 1) * NW])
        for a in nl.affine_range(MT):
            for s in nl.affine_range(NW // NS):
                acc = nl.zeros((P, NS), dtype=nl.float32, buffer=nl.psum)
                for t in nl.affine_range(KT):
                    acc += nisa.nc_matmul(lhs_t[a, t], rhs_stripe[t, :, s * NS:(s + 1) * NS])
                res = nl.copy(acc, dtype=lhs.dtype)
                nl.store(out[a, :, n * NW + s * NS:n * NW + (s + 1) * NS], value=res)
    return out
