"""The state of one simulated kernel run and the one place trace events are appended.

A `Run` holds the trace, the loop stack (for `TraceEvent.loops` and the tensor-scope rule), the
SPMD position, live-memory accounting and the ACT accumulator registers. Only one run is active
per thread of control; NKI APIs find it with `current()`.
"""
from __future__ import annotations

import os
import random
import sys
from contextlib import contextmanager

import numpy as np

from .capacity import CAPACITY, LiveMemory
from .errors import SimRuntimeError
from .trace import Engine, TraceEvent

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


class Run:
    """Everything one kernel launch (all SPMD instances) accumulates."""

    def __init__(self, *, compute: bool = True, collect_trace: bool = True,
                 hardware: str = "trn1", shuffle_seed: int | None = None,
                 enforce_capacity: bool = True) -> None:
        if hardware not in CAPACITY:
            raise ValueError(f"hardware must be one of {sorted(CAPACITY)}, got {hardware!r}")
        self.compute = compute
        self.trace: list[TraceEvent] | None = [] if collect_trace else None
        self.hardware = hardware
        self.loops: tuple = ()
        self.scope: tuple[int, ...] = ()  # one token per enclosing (non-static) loop entry
        self.program_id: tuple[int, ...] = ()
        self.grid: tuple[int, ...] = ()
        self.rng = random.Random(shuffle_seed) if shuffle_seed is not None else None
        self.loop_ids: dict[tuple[str, int], int] = {}
        self.memory = LiveMemory(CAPACITY[hardware], enforce=enforce_capacity)
        self.warnings = self.memory.warnings
        self.shared: list = []  # shared_hbm tensors, by allocation order (one per SPMD program)
        self.shared_cursor = 0
        self.act_acc = np.zeros((128, 1), np.float32)  # ACT per-lane accumulator registers
        self.loop_reduce: dict = {}
        self.constants: dict = {}
        self.flagged_sites: set = set()
        self.access_cache: dict = {}  # (tensor id, spans) -> Access (frozen, shareable)
        self.lazy: dict[int, list] = {}  # tensor root -> fresh tiles still viewing its bytes
        self._ids = 0

    def new_id(self) -> int:
        self._ids += 1
        return self._ids

    def loop_id(self, site: tuple[str, int]) -> int:
        lid = self.loop_ids.get(site)
        if lid is None:
            lid = self.loop_ids[site] = len(self.loop_ids) + 1
        return lid

    def emit(self, op: str, engine: Engine, reads: tuple, writes: tuple, dtype: str,
             partitions: int, free_size: int, attrs: dict | None = None) -> int:
        """Append one executed instruction; returns its index (for destination retargeting)."""
        file, line = caller()
        self.trace.append(TraceEvent(op, engine, reads, writes, dtype, partitions, free_size,
                                     self.loops, line, file, attrs or {}))
        return len(self.trace) - 1


_RUN: Run | None = None


def current() -> Run:
    if _RUN is None:
        raise SimRuntimeError("NKI instructions can only run inside a simulated kernel "
                              "(simulate_kernel / run_kernel)", code="nkisim_no_active_kernel")
    return _RUN


def active() -> Run | None:
    return _RUN


@contextmanager
def using(run: Run):
    global _RUN
    prev, _RUN = _RUN, run
    try:
        yield run
    finally:
        _RUN = prev


# id(code object) -> (code, None) for this package's code, else (code, {instruction offset:
# (file, line)}). Keyed by id: a code object hashes its whole contents on every lookup. The entry
# holds the code object, so the id cannot be reused while it is cached.
_CODES: dict = {}


def caller() -> tuple[str, int]:
    """Source location of the innermost kernel frame (first frame outside this package).

    Called once per traced instruction. `f_lineno` decodes the code's line table from its start
    on every access (slow in long kernels), so sites are cached by (code, instruction offset)."""
    f = sys._getframe(2)
    codes = _CODES
    while f is not None:
        code = f.f_code
        entry = codes.get(id(code))
        if entry is None:
            if len(codes) > 4096:  # kernels loaded over a long session: do not pin them all
                codes.clear()
            entry = codes[id(code)] = (code, None if code.co_filename.startswith(_PKG_DIR)
                                       else {})
        sites = entry[1]
        if sites is not None:
            lasti = f.f_lasti
            site = sites.get(lasti)
            if site is None:
                site = sites[lasti] = (code.co_filename, f.f_lineno)
            return site
        f = f.f_back
    return "", 0


def in_package(filename: str) -> bool:
    return filename.startswith(_PKG_DIR)
