"""Matmul variant that is slower: each lhs block is transposed again next to every matmul, rhs tiles reloaded."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(lhs, rhs):
    MT, P, KT, _ = lhs.shape
    N = rhs.shape[2]
    out = nl.ndarray((MT, P, N), dtype=lhs.dtype, buffer=nl.shared_hbm)
    NS = 512
    for a in nl.affine_range(MT):
        lhs_rows = nl.load(lhs[a])
        for s in nl.affine_range(N // NS):
            acc = nl.zeros((P, NS), dtype=nl.float32, buffer=nl.psum)
            for t in nl.affine_range(KT):
                lhs_t = nl.copy(nisa.nc_transpose(lhs_rows[:, t, :]), dtype=lhs.dtype)
                rhs_tile = nl.load(rhs[t, :, s * NS:(s + 1) * NS])
                acc += nisa.nc_matmul(lhs_t, rhs_tile)
            nl.store(out[a, :, s * NS:(s + 1) * NS], value=nl.copy(acc, dtype=lhs.dtype))
    return out
