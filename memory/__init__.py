"""The optimization memory: experiences (slow/fast kernel pairs), their Chroma store, selection and
diverse retrieval (installed as accelopt_graph.memory). Imports nothing else from this repository."""
