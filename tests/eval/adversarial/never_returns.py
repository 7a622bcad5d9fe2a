"""Attack: spin forever. Expected: timeout (the process group is killed)."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    while True:
        pass
    return nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
