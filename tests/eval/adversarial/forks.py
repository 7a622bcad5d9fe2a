"""Attack: fork worker processes (to escape the timeout or to fork-bomb). Expected: rejected by the
policy; with the policy off, fork is denied by seccomp (runtime_error) and nothing outlives the run."""
import os

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    for _ in range(64):
        os.fork()
    return nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
