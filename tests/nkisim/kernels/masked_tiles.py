"""Element-wise kernel on a shape that is not a multiple of the tile (masked partial tiles),
with mgrid indices and masks whose masked-out rows and columns lie out of bounds."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def masked_scale_add(a, b):
    M, N = a.shape
    out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)
    TN = 256
    i = nl.mgrid[0:128, 0:TN]
    for r in nl.affine_range((M + 127) // 128):
        for c in nl.affine_range((N + TN - 1) // TN):
            rows = r * 128 + i.p
            cols = c * TN + i.x
            m = (rows < M) & (cols < N)
            ta = nl.load(a[rows, cols], mask=m)
            tb = nl.load(b[rows, cols], mask=m)
            y = nl.add(nl.multiply(ta, 2.0, mask=m), tb, mask=m)
            nl.store(out[rows, cols], value=y, mask=m)
    return out
