"""bmm baseline: per batch, N chunk and row tile: transpose lhs, two matmuls, copy, store."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(lhs, rhs):
    B, M, K = lhs.shape
    N = rhs.shape[2]
    out = nl.ndarray((B, M, N), dtype=lhs.dtype, buffer=nl.shared_hbm)
    NW = 1024 if N % 1024 == 0 else 512
    NS = 512  # one PSUM bank of fp32
    assert M % 128 == 0 and K <= 128 and N % NW == 0, "baseline needs M % 128 == 0, K <= 128, N % 512 == 0"
    for b in nl.affine_range(B):
        for n in nl.affine_range(N // NW):
            rt = nl.load(rhs[b, :, n * NW:(n + 1) * NW])  # [K partitions, NW]
            for a in nl.affine_range(M // 128):
                lt = nl.load(lhs[b, a * 128:(a + 1) * 128, :])  # [128 rows, K]
                lt_t = nl.copy(nisa.nc_transpose(lt), dtype=lhs.dtype)  # [K, 128 rows]
                res = nl.ndarray((128, NW), dtype=lhs.dtype, buffer=nl.sbuf)
                for s in nl.affine_range(NW // NS):
                    ps = nisa.nc_matmul(lt_t, rt[:, s * NS:(s + 1) * NS])
                    res[:, s * NS:(s + 1) * NS] = nl.copy(ps, dtype=lhs.dtype)
                nl.store(out[b, a * 128:(a + 1) * 128, n * NW:(n + 1) * NW], value=res)
    return out
