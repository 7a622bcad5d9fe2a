"""accelopt-graph: the AccelOpt self-improving kernel optimizer as a LangGraph graph."""

__version__ = "0.1.0"
