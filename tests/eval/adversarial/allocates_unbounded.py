"""Attack: allocate host memory without bound. Expected: runtime_error (address-space limit)."""
import numpy as np

import neuronxcc.nki as nki

_HOARD = []


@nki.jit
def kernel(x):
    while True:
        _HOARD.append(np.ones(1 << 26))
