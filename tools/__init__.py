"""Evaluation backends behind one protocol, the NKI CPU simulator, the sandbox and LangChain tools.

Installed as `accelopt_graph.tools`. Imports nothing else from this repository.
"""
