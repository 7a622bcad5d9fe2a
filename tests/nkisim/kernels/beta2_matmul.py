"""Beta 2 style (nki-samples after 2.27): `import nki`, destination-passing ISA calls, PSUM
accumulation with accumulate=None (first write overwrites), dma_copy instead of load/store."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_beta2(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        for n in nl.affine_range(N // 512):
            res_psum = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                a = nl.ndarray((128, 128), dtype=lhsT.dtype, buffer=nl.sbuf)
                b = nl.ndarray((128, 512), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                nisa.dma_copy(dst=b, src=rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                nisa.nc_matmul(res_psum, a, b)
            res_sb = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res_sb, src=res_psum)
            nisa.activation(res_sb, nl.relu, res_sb)
            nisa.dma_copy(dst=result[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], src=res_sb)
    return result


@nki.jit
def iota_beta2(x):
    out = nl.ndarray((128, 64), dtype=nl.int32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=nl.int32, buffer=nl.sbuf)
    nisa.iota(t, pattern=[[1, 64]], offset=5, channel_multiplier=64)
    nisa.dma_copy(dst=out, src=t)
    return out
