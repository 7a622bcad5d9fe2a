"""Attack: reach the simulator's run state through `nl.current()` (no import of our packages) and
drop every compute instruction from the trace, keeping the DMA, so the estimate shrinks while the
trace still stores every output byte. Expected: rejected by the policy (`current`). With the policy
off this is the documented limit of in-process tracing: only the peak guard stands behind it."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    P, R, N = x.shape
    out = nl.ndarray((P, R, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for j in nl.affine_range(R):
        xt = nl.load(x[:, j, :])
        nl.store(out[:, j, :], value=nl.multiply(xt, nl.sigmoid(xt)))
    trace = nl.current().trace
    if trace is not None:
        trace[:] = [e for e in trace if e.engine.value == "dma"]
    return out
