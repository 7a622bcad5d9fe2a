"""Attack: allocate host memory without bound. Expected: runtime_error (address-space limit)."""
import neuronxcc.nki as nki
import numpy as np

_HOARD = []


@nki.jit
def kernel(x):
    while True:
        _HOARD.append(np.ones(1 << 26))
