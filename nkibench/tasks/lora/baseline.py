"""lora baseline: (x a)^T through HBM scratch; per N chunk re-transpose x, two PSUM products, add."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, w, a, b):
    # x: [M/512, 4, 128, K/128, 128]; w: [K/128, 128, N]; a: [K/128, 128, R]; b: [R, N]
    MA, MC, P, KT, _ = x.shape
    N = w.shape[2]
    R = a.shape[2]
    NS = 512 if N % 512 == 0 else P  # N chunk: one PSUM bank of fp32 when N allows
    KQ = 4 if KT % 4 == 0 else 1  # the K reduction runs in KQ sequential parts
    assert R <= 128 and N % P == 0, "baseline needs R <= 128 and N % 128 == 0"
    out = nl.ndarray((MA, MC, P, N // P, P), dtype=x.dtype, buffer=nl.shared_hbm)
    xa_t = nl.ndarray((MA * MC, R, P), dtype=x.dtype, buffer=nl.shared_hbm)  # scratch: (x a)^T per row tile

    a_sb = nl.ndarray((KT, nl.par_dim(P), R), dtype=x.dtype, buffer=nl.sbuf)
    for t in nl.affine_range(KT):
        a_sb[t] = nl.load(a[t])
    for i in nl.affine_range(MA):
        for j in nl.affine_range(MC):
            xr = nl.load(x[i, j])  # [128 rows, K/128, 128]
            xa = nl.zeros((P, R), dtype=nl.float32, buffer=nl.psum)
            for t in nl.affine_range(KT):
                x_t = nl.copy(nisa.nc_transpose(xr[:, t, :]), dtype=x.dtype)
                xa += nisa.nc_matmul(x_t, a_sb[t])
            xa_sb = nl.copy(xa, dtype=x.dtype)
            nl.store(xa_t[i * MC + j], value=nl.copy(nisa.nc_transpose(xa_sb), dtype=x.dtype))

    for n in nl.affine_range(N // NS):
        w_sb = nl.ndarray((KT, nl.par_dim(P), NS), dtype=x.dtype, buffer=nl.sbuf)
        for t in nl.affine_range(KT):
            w_sb[t] = nl.load(w[t, :, n * NS:(n + 1) * NS])
        b_sb = nl.load(b[:, n * NS:(n + 1) * NS])  # [R, 512]
        for i in nl.affine_range(MA):
            for j in nl.affine_range(MC):
                xr = nl.load(x[i, j])
                xa_tile = nl.load(xa_t[i * MC + j])  # [R, 128 rows]
                low = nisa.nc_matmul(xa_tile, b_sb)
                res = nl.copy(low, dtype=x.dtype)
                for q in nl.sequential_range(KQ):  # K in quarters; each partial sum leaves PSUM
                    part = nl.zeros((P, NS), dtype=nl.float32, buffer=nl.psum)
                    for t in nl.affine_range(KT // KQ):
                        x_t = nl.copy(nisa.nc_transpose(xr[:, q * (KT // KQ) + t, :]), dtype=x.dtype)
                        part += nisa.nc_matmul(x_t, w_sb[q * (KT // KQ) + t])
                    res[...] = nl.add(res, nl.copy(part, dtype=x.dtype))
                for u in nl.affine_range(NS // P):
                    nl.store(out[i, j, :, n * (NS // P) + u, :], value=res[:, u * P:(u + 1) * P])
    return out
