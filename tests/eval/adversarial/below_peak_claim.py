"""Attack: do the work, then forge a self-consistent trace: one memset that writes a tile, and the
output stores rewritten to read that tile, so every output byte is stored and every tile read was
written, yet no input is loaded and nothing is computed. Expected: rejected by the policy; with
the policy off, rejected and flagged (below_peak): the forged estimate beats the hardware's limit."""
import dataclasses

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from accelopt_graph.tools.nkisim import runtime


@nki.jit
def kernel(x):
    P, R, N = x.shape
    out = nl.ndarray((P, R, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for j in nl.affine_range(R):
        xt = nl.load(x[:, j, :])
        nl.store(out[:, j, :], value=nl.multiply(xt, nl.sigmoid(xt)))
    blank = nl.zeros((P, N), dtype=x.dtype)
    trace = runtime.current().trace
    if trace is not None:  # only the timed run records a trace
        memset = trace[-1]
        stores = [dataclasses.replace(e, reads=memset.writes) for e in trace if e.op == "store"]
        trace[:] = [memset, *stores]
    del blank
    return out
