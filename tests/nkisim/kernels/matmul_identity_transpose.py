"""Matmul where lhs [M, K] is transposed on TensorE by an identity matmul (is_transpose)."""
import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def matmul_identity_transpose(lhs, rhs):
    M, K = lhs.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    ident_hbm = nl.shared_constant(np.identity(128, dtype=np.float32))
    ident = nl.load(ident_hbm)
    i_p = nl.arange(128)[:, None]
    i_k = nl.arange(128)[None, :]
    i_n = nl.arange(N)[None, :]
    for m in nl.affine_range(M // 128):
        acc = nl.zeros((128, N), nl.float32, buffer=nl.psum)
        for k in nl.affine_range(K // 128):
            a = nl.load(lhs[m * 128 + i_p, k * 128 + i_k])  # [128 rows, 128 of K]
            a_t_psum = nisa.nc_matmul(a, ident, is_transpose=True)  # a.T: [128 of K, 128 rows]
            a_t = nl.copy(a_t_psum)
            b = nl.load(rhs[k * 128 + i_p, i_n])
            acc += nisa.nc_matmul(a_t, b)
        nl.store(out[m * 128 + i_p, i_n], value=nl.copy(acc))
    return out
