"""A second front end: the Beta 2 `nki` namespace (SDK 2.27+) over the same simulator core.

Covered: destination-passing `nisa.*` calls (`nisa.dma_copy(dst=, src=)`, `nisa.nc_matmul(dst, ...,
accumulate=None)`, ...), `nl.ndarray` / loops / dtypes / buffers, the experimental high-level
`nl.*` ops, `nki.jit` with `kernel[lnc]` launches and `nki.simulate`. Not covered (they raise
`SimUnsupportedError`): access patterns (`.ap()`), `nisa.affine_select`'s Beta 2 signature,
dynamic control flow (`register_*`, `dynamic_range`), collectives.
"""
