"""Attack: softmax without subtracting the row max (fine on N(0,1), overflows on large inputs).
Expected: incorrect on the large-magnitude adversarial case."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    e = nl.exp(nl.load(x))
    s = nl.sum(e, axis=1, keepdims=True)
    nl.store(out, value=nl.divide(e, s))
    return out
