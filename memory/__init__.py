"""The optimization memory: experiences (slow/fast kernel pairs), their Chroma store, selection and
diverse retrieval (installed as accelopt_graph.memory). Imports nothing else from this repository.

Modules: `experience` (the item and its planner rendering), `selection` (TopK pairs per round),
`config` (MemoryConfig), `embedding` (offline hashing default), `retrieval` (query + MMR),
`eviction` (capacity policies), `store` (ExperienceStore, ChromaExperienceStore, open_store), `cli`.
Importing this package does not import Chroma; `store` does.
"""
