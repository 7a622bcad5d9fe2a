"""An open NKI CPU simulator with a Trainium performance model (installed as accelopt_graph.tools.nkisim)."""

# Performance model (issue 3): time a kernel and get neuron-profile-shaped counters.
from accelopt_graph.tools.nkisim.profile import Profile, profile_kernel  # noqa: E402,F401
