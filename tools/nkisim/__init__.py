"""An open NKI CPU simulator with a Trainium performance model (installed as accelopt_graph.tools.nkisim).

Functional core: run unmodified legacy NKI kernels (`neuronxcc.nki`) on NumPy and record one
`TraceEvent` per instruction for the performance model.
"""
from .errors import SimCompileError, SimError, SimRuntimeError, SimUnsupportedError
from .frontend import activate, load_module, load_source
from .interpreter import (AffineOrderReport, SimResult, check_affine_iterations, run_kernel,
                          simulate_kernel)
from .kernel import jit

__all__ = [
    "activate", "load_module", "load_source", "simulate_kernel", "run_kernel", "SimResult",
    "check_affine_iterations", "AffineOrderReport", "jit", "SimError", "SimCompileError",
    "SimRuntimeError", "SimUnsupportedError",
]

# Performance model (issue 3): time a kernel and get neuron-profile-shaped counters.
from .profile import Profile, profile_kernel, profile_trace  # noqa: E402

__all__ += ["Profile", "profile_kernel", "profile_trace"]
