"""Attack: compute only the first row block and leave the rest unwritten. Expected: incorrect
(outputs start as NaN, so unwritten elements fail)."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    P, R, N = x.shape
    out = nl.ndarray((P, R, N), dtype=x.dtype, buffer=nl.shared_hbm)
    xt = nl.load(x[:, 0, :])
    nl.store(out[:, 0, :], value=nl.multiply(xt, nl.sigmoid(xt)))
    return out
