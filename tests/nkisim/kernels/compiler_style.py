"""A matmul written the way the Neuron compiler emits NKI (the style of upstream NKIBench
baselines): numbered variables, full logical block buffers, int + arange indexing everywhere,
np dtypes, `lazy_initialization`, PE transposes by identity matmul, one store per tile."""
import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def matmul(v1, v2):
    # v1: [M, K], v2: [K, N]; M, K multiples of 128, N multiple of 512
    M, K = v1.shape
    N = v2.shape[1]
    MT, KT, NT = M // 128, K // 128, N // 512
    v3 = nl.ndarray((M, N), dtype=np.float32, buffer=nl.shared_hbm)
    v4 = nl.ndarray((nl.par_dim(128), 128), dtype=np.float32, name="identity", buffer=nl.sbuf)
    v4[nl.arange(128)[:, None], nl.arange(128)[None, :]] = nl.load(
        nl.shared_constant(np.identity(128, dtype=np.float32))[nl.arange(128)[:, None],
                                                              nl.arange(128)[None, :]])
    v5 = nl.ndarray((MT, KT, nl.par_dim(128), 128), dtype=np.float32, name="lhsT", buffer=nl.sbuf)
    v6 = nl.ndarray((KT, nl.par_dim(128), N), dtype=np.float32, name="rhs", buffer=nl.sbuf)
    for i0 in nl.affine_range(KT):
        v6[i0, nl.arange(128)[:, None], nl.arange(N)[None, :]] = nl.load(
            v2[i0 * 128 + nl.arange(128)[:, None], nl.arange(N)[None, :]])
    for i1 in nl.affine_range(MT):
        for i2 in nl.affine_range(KT):
            v7 = nl.load(v1[i1 * 128 + nl.arange(128)[:, None], i2 * 128 + nl.arange(128)[None, :]])
            v8 = nisa.nc_matmul(v7[nl.arange(128)[:, None], nl.arange(128)[None, :]],
                                v4[nl.arange(128)[:, None], nl.arange(128)[None, :]],
                                is_transpose=True, is_moving_onezero=True)
            v5[i1, i2, nl.arange(128)[:, None], nl.arange(128)[None, :]] = nl.copy(
                v8, dtype=np.float32)
    v9 = nl.zeros((MT, NT, nl.par_dim(128), 512), dtype=np.float32, name="acc", buffer=nl.psum,
                  lazy_initialization=True)
    for i3 in nl.affine_range(MT):
        for i4 in nl.affine_range(NT):
            for i5 in nl.affine_range(KT):
                v9[i3, i4, nl.arange(128)[:, None], nl.arange(512)[None, :]] += nisa.nc_matmul(
                    v5[i3, i5, nl.arange(128)[:, None], nl.arange(128)[None, :]],
                    v6[i5, nl.arange(128)[:, None], i4 * 512 + nl.arange(512)[None, :]])
            v10 = nl.copy(v9[i3, i4, nl.arange(128)[:, None], nl.arange(512)[None, :]],
                          dtype=np.float32)
            nl.store(v3[i3 * 128 + nl.arange(128)[:, None], i4 * 512 + nl.arange(512)[None, :]],
                     value=v10[nl.arange(128)[:, None], nl.arange(512)[None, :]])
    return v3
