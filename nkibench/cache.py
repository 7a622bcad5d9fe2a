"""A byte-bounded LRU for oracle outputs and generated inputs.

Full-size references are expensive (bmm_softmax: a 1 GiB output from a 34 GFLOP matmul plus a
softmax), so they are computed once per (task, version, parameters, seed, case). The bound is
`ORACLE_CACHE.max_bytes` (default 3 GiB; the bench sets it from `--cache-mb`); a result larger
than the bound is not cached.
Cached arrays are read-only so that no caller can corrupt a later check.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Hashable, Sequence

import numpy as np

DEFAULT_CACHE_MB = 3072


class ArrayCache:
    """Least-recently-used cache of lists of arrays, bounded by their total bytes."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._items: OrderedDict[Hashable, tuple[list, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._computing: dict[Hashable, threading.Lock] = {}
        self.hits = self.misses = 0

    @property
    def nbytes(self) -> int:
        return self._bytes

    def get_or_compute(self, key: Hashable, compute: Callable[[], Sequence]) -> list:
        """Return the cached value of `key`, computing it once even when threads ask at the same time."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                self.hits += 1
                return list(self._items[key][0])
            key_lock = self._computing.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                if key in self._items:  # another thread computed it while this one waited
                    self.hits += 1
                    return list(self._items[key][0])
            self.misses += 1
            values = list(compute())
            for v in values:
                if isinstance(v, np.ndarray):
                    v.setflags(write=False)
            size = sum(v.nbytes for v in values if isinstance(v, np.ndarray))
            with self._lock:
                if size <= self.max_bytes and key not in self._items:
                    self._items[key] = (values, size)
                    self._bytes += size
                    while self._bytes > self.max_bytes:
                        _, (_, old) = self._items.popitem(last=False)
                        self._bytes -= old
                self._computing.pop(key, None)
        return list(values)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


ORACLE_CACHE = ArrayCache(DEFAULT_CACHE_MB << 20)
