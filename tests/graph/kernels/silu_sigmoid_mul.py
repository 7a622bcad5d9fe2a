"""SiLU variant that is slower than the fused kernel: sigmoid on ScalarE, then a multiply on VectorE."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    P, R, N = x.shape
    out = nl.ndarray((P, R, N), dtype=x.dtype, buffer=nl.shared_hbm)
    TILE = 1024 if N % 1024 == 0 else 512
    for j in nl.affine_range(R):
        for c in nl.affine_range(N // TILE):
            xt = nl.load(x[:, j, c * TILE:(c + 1) * TILE])
            s = nisa.activation(op=nl.sigmoid, data=xt)
            y = nl.multiply(xt, s)
            nl.store(out[:, j, c * TILE:(c + 1) * TILE], value=y)
    return out
