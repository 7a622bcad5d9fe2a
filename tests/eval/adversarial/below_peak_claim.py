"""Attack: do the work, then rewrite the recorded trace to keep only the output stores, so the
trace still accounts for every output byte but the estimate drops below what the hardware can do.
Expected: rejected by the policy; with the policy off, rejected and flagged (below_peak)."""
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
    trace = runtime.current().trace
    if trace is not None:  # only the timed run records a trace
        trace[:] = [e for e in trace if e.op == "store"]
    return out
