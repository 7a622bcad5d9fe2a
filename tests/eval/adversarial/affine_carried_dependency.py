"""Attack: a SiLU kernel whose affine_range iterations all reuse one SBUF tile allocated outside
the loop. Run in order it is correct, but affine iterations may overlap, so the performance model
would time it as if they did. Expected: compile_error (err_unexpected_output_dependencies)."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    P, R, N = x.shape
    out = nl.ndarray((P, R, N), dtype=x.dtype, buffer=nl.shared_hbm)
    shared = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.sbuf)
    for j in nl.affine_range(R):
        shared[...] = nl.load(x[:, j, :])
        nl.store(out[:, j, :], value=nl.multiply(shared, nl.sigmoid(shared)))
    return out
