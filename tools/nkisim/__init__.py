"""An open NKI CPU simulator with a Trainium performance model (installed as accelopt_graph.tools.nkisim)."""
