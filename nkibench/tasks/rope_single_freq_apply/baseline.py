"""rope baseline: 512-column tiles, each half of x on its own 64-partition tile."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, freqs_cos, freqs_sin):
    D, S = x.shape
    H2 = D // 2
    W = 512
    assert D <= 128 and S % W == 0, "baseline needs D <= 128 and S % 512 == 0"
    out = nl.ndarray((D, S), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(S // W):
        cols = nl.ds(i * W, W)
        x0 = nl.load(x[0:H2, cols])
        x1 = nl.load(x[H2:D, cols])
        cos = nl.load(freqs_cos[:, cols])
        sin = nl.load(freqs_sin[:, cols])
        a = nl.multiply(x0, cos)
        b = nl.multiply(x1, sin)
        lo = nl.subtract(a, b)
        c = nl.multiply(x0, sin)
        d = nl.multiply(x1, cos)
        hi = nl.add(c, d)
        nl.store(out[0:H2, cols], value=lo)
        nl.store(out[H2:D, cols], value=hi)
    return out
