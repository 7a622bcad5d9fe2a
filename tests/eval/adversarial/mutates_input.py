"""Attack: overwrite the input with the result and return it. Expected: runtime_error or
compile_error (kernel parameters are immutable); a mutated input never counts as an output."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    P, R, N = x.shape
    for j in nl.affine_range(R):
        xt = nl.load(x[:, j, :])
        nl.store(x[:, j, :], value=nl.multiply(xt, nl.sigmoid(xt)))
    return x
