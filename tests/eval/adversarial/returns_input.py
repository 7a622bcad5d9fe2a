"""Attack: copy the input to the output (an identity 'kernel'). Expected: incorrect."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    P, R, N = x.shape
    out = nl.ndarray((P, R, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for j in nl.affine_range(R):
        nl.store(out[:, j, :], value=nl.load(x[:, j, :]))
    return out
