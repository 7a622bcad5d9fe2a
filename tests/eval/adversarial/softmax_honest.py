"""Control: a numerically safe softmax (subtracts the row max). Expected: ok on every case."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    m = nl.max(t, axis=1, keepdims=True)
    e = nl.exp(nl.subtract(t, m))
    s = nl.sum(e, axis=1, keepdims=True)
    nl.store(out, value=nl.divide(e, s))
    return out
