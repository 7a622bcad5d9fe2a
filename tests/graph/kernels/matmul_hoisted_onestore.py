"""Matmul rewrite 2: as rewrite 1, plus one full-width output store per row block."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(lhs, rhs):
    MT, P, KT, _ = lhs.shape
    N = rhs.shape[2]
    out = nl.ndarray((MT, P, N), dtype=lhs.dtype, buffer=nl.shared_hbm)
    NS = 512  # one PSUM bank of fp32
    rhs_all = nl.ndarray((KT, nl.par_dim(P), N), dtype=rhs.dtype, buffer=nl.sbuf)
    for t in nl.affine_range(KT):
        rhs_all[t] = nl.load(rhs[t])
    for a in nl.affine_range(MT):
        lhs_rows = nl.load(lhs[a])
        lhs_t = nl.ndarray((KT, nl.par_dim(P), P), dtype=lhs.dtype, buffer=nl.sbuf)
        for t in nl.affine_range(KT):
            lhs_t[t] = nl.copy(nisa.nc_transpose(lhs_rows[:, t, :]), dtype=lhs.dtype)
        row = nl.ndarray((nl.par_dim(P), N), dtype=lhs.dtype, buffer=nl.sbuf)
        for s in nl.affine_range(N // NS):
            acc = nl.zeros((P, NS), dtype=nl.float32, buffer=nl.psum)
            for t in nl.affine_range(KT):
                acc += nisa.nc_matmul(lhs_t[t], rhs_all[t, :, s * NS:(s + 1) * NS])
            row[:, s * NS:(s + 1) * NS] = nl.copy(acc, dtype=lhs.dtype)
        nl.store(out[a], value=row)
    return out
