"""AdamW baseline: masked 128-row tiles, one instruction per arithmetic step, nothing fused."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(theta, g, m, v):
    M, N = theta.shape
    out = nl.ndarray((M, N), dtype=theta.dtype, buffer=nl.shared_hbm)
    W = 1024 if N % 1024 == 0 else 512  # columns per load
    S = 512  # columns per compute sub-tile
    assert N % W == 0, f"adamw baseline needs N % 512 == 0, got N={N}"
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(W)[None, :]
    for r in nl.affine_range((M + 127) // 128):
        rows = r * 128 + i_p
        for c in nl.affine_range(N // W):
            cols = c * W + i_f
            valid = rows < M  # the last row tile is partial: M % 128 rows
            th = nl.load(theta[rows, cols], mask=valid)
            gt = nl.load(g[rows, cols], mask=valid)
            mt = nl.load(m[rows, cols], mask=valid)
            vt = nl.load(v[rows, cols], mask=valid)
            res = nl.ndarray((128, W), dtype=theta.dtype, buffer=nl.sbuf)
            for s in nl.affine_range(W // S):
                sl = nl.ds(s * S, S)
                m1 = nl.multiply(mt[:, sl], 0.9)
                g1 = nl.multiply(gt[:, sl], 0.1)
                m_new = nl.add(m1, g1)
                g2 = nl.multiply(gt[:, sl], gt[:, sl])
                g3 = nl.multiply(g2, 0.001)
                v1 = nl.multiply(vt[:, sl], 0.999)
                v_new = nl.add(v1, g3)
                root = nisa.activation(op=nl.sqrt, data=v_new, scale=1000.0)
                denom = nl.add(root, 1e-8)
                inv = nl.reciprocal(denom)
                upd = nl.multiply(m_new, inv)
                upd = nl.multiply(upd, 0.01)
                decay = nl.multiply(th[:, sl], 1e-5)
                kept = nl.subtract(th[:, sl], decay)
                res[:, sl] = nl.subtract(kept, upd)
            nl.store(out[rows, cols], value=res, mask=valid)
    return out
