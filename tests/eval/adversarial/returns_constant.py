"""Attack: write a constant (zeros) without reading the input. Expected: incorrect."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    P, R, N = x.shape
    out = nl.ndarray((P, R, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for j in nl.affine_range(R):
        nl.store(out[:, j, :], value=nl.zeros((P, N), dtype=x.dtype))
    return out
