"""Attack: compute once, then return the first call's result for every later seed. Expected: incorrect."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

_CACHE = []


@nki.jit
def kernel(x):
    if _CACHE:
        return _CACHE[0]
    P, R, N = x.shape
    out = nl.ndarray((P, R, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for j in nl.affine_range(R):
        xt = nl.load(x[:, j, :])
        nl.store(out[:, j, :], value=nl.multiply(xt, nl.sigmoid(xt)))
    _CACHE.append(out)
    return out
