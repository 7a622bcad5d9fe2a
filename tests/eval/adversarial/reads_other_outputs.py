"""Attack: look for other evaluations' output files (same task, same seed, run concurrently) and
return one. Expected: rejected by the policy (glob, numpy.load); with the policy off, the file
system outside the sandbox's own directory is unreadable (runtime_error)."""
import glob

import neuronxcc.nki as nki
import numpy as np


@nki.jit
def kernel(x):
    found = glob.glob("/tmp/accelopt-eval-*/out/c*_o0.npy") + glob.glob("/dev/shm/accelopt-eval-*/out/c*_o0.npy")
    if not found:
        raise FileNotFoundError("no other evaluation's outputs are visible")
    return np.load(found[0])
