"""NKIBench: the 14 Trainium tasks, their NumPy references and baseline kernels, the peak
calculator and the bench runner (installed as accelopt_graph.nkibench)."""
