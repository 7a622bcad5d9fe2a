"""Attack: read the reference outputs out of the trusted parent's memory or from files.
Expected: rejected by the policy (os, open); with the policy off, the OS confinement denies it
(runtime_error)."""
import os

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    with open(f"/proc/{os.getppid()}/mem", "rb") as f:
        f.read(1)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    return out
