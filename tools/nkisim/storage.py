"""Lazy storage for tensors with block dims (`nl.ndarray((B1, B2, par_dim(128), F))`).

Compiler-emitted kernels declare logical buffers of several GiB; the compiler rotates a few
physical buffers behind them (trainium.md §7.5). Here each block (one index tuple over the block
dims) is allocated on first touch, so memory follows what the kernel actually uses.
"""
from __future__ import annotations

import math

import numpy as np

from .errors import SimUnsupportedError

LAZY_THRESHOLD_BYTES = 64 * 2**20  # dense below this: a plain array is faster


class BlockStore:
    """Duck-types the bits of `np.ndarray` that `indexing.read/write` use."""

    __slots__ = ("shape", "dtype", "nblock", "fill", "blocks")

    def __init__(self, shape: tuple, dtype: np.dtype, nblock: int, fill) -> None:
        self.shape, self.dtype, self.nblock, self.fill = shape, dtype, nblock, fill
        self.blocks: dict[tuple, np.ndarray] = {}

    @property
    def nbytes_allocated(self) -> int:
        return sum(b.nbytes for b in self.blocks.values())

    def _split(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        head, rest = key[:self.nblock], key[self.nblock:]
        if len(head) < self.nblock or not all(isinstance(k, (int, np.integer)) for k in head):
            raise SimUnsupportedError(
                "indexing the block dims of a lazily allocated tensor with slices or aranges",
                "index each block dim with an int (loop index)")
        head = tuple(int(k) for k in head)
        block = self.blocks.get(head)
        if block is None:
            block = self.blocks[head] = np.full(self.shape[self.nblock:], self.fill, self.dtype)
        return block, rest

    def __getitem__(self, key):
        block, rest = self._split(key)
        return block[rest] if rest else block

    def __setitem__(self, key, value) -> None:
        block, rest = self._split(key)
        if rest:
            block[rest] = value
        else:
            block[...] = value

    def __array__(self, dtype=None, copy=None):
        out = np.full(self.shape, self.fill, self.dtype)
        for k, b in self.blocks.items():
            out[k] = b
        return out if dtype is None else out.astype(dtype)


def make_storage(shape: tuple, dtype: np.dtype, pdim: int, fill):
    """A dense array, or a `BlockStore` for big tensors with block dims."""
    if pdim > 0 and math.prod(shape) * dtype.itemsize > LAZY_THRESHOLD_BYTES:
        return BlockStore(shape, dtype, pdim, fill)
    return np.full(shape, fill, dtype=dtype)
