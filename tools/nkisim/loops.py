"""`nl.affine_range`, `nl.sequential_range`, `nl.static_range`: eager loops that record themselves.

Each iteration pushes a `LoopFrame` (for the trace); each loop, except unrolled static ones, opens
a scope (for the tensor-scope rule). In affine-order check mode the
iterations of `affine_range` run in a shuffled order: independent iterations give the same result.
"""
from __future__ import annotations

import sys

from .runtime import active
from .trace import LoopFrame, LoopKind


def _compare(name):
    base = getattr(int, name)

    def method(self, other):
        _warn_control_flow()
        return base(self, other)
    return method


def _warn_control_flow() -> None:
    run = active()
    if run is None:
        return
    f = sys._getframe(2)
    site = (f.f_code.co_filename, f.f_lineno)
    if site not in run.flagged_sites:
        run.flagged_sites.add(site)
        run.warnings.append(
            f"{site[0]}:{site[1]}: Python control flow on a loop index; the Beta 1 compiler traces "
            "a loop body once, so this `if` / conditional expression is undefined on hardware "
            "(use a mask=, or peel the iteration out of the loop)")


class LoopVar(int):
    """A loop index: an int that also knows its loop (needed by `nl.loop_reduce`).

    Comparing it (`if i == 0:`) runs eagerly here but is recorded as a warning, because the real
    Beta 1 compiler traces the loop body once (trainium.md §7.12).
    """

    depth: int  # number of enclosing loop frames
    first: bool  # the first iteration executed (shuffled order included)
    scope_depth: int  # number of enclosing scopes
    __eq__, __ne__ = _compare("__eq__"), _compare("__ne__")
    __lt__, __le__ = _compare("__lt__"), _compare("__le__")
    __gt__, __ge__ = _compare("__gt__"), _compare("__ge__")
    __hash__ = int.__hash__


def _loop(kind: LoopKind, args, site) -> object:
    r = range(*(int(a) for a in args))
    run = active()
    if run is None:
        return iter(r)
    return _iterate(run, kind, r, run.loop_id(site))


def _iterate(run, kind, r, loop_id):
    outer_loops, outer_scope = run.loops, run.scope
    depth = len(outer_loops)
    order = list(range(len(r)))
    if kind is LoopKind.AFFINE and run.rng is not None:
        run.rng.shuffle(order)
    n = len(r)
    scoped = kind is not LoopKind.STATIC
    inner_scope = outer_scope + (run.new_id(),) if scoped else outer_scope
    try:
        for pos, it in enumerate(order):
            run.loops = outer_loops + (LoopFrame(loop_id, kind, it, n),)
            run.scope = inner_scope
            var = LoopVar(r[it])
            var.depth, var.first, var.scope_depth = depth, pos == 0, len(outer_scope)
            yield var
            run.loops, run.scope = outer_loops, outer_scope
    finally:
        run.loops, run.scope = outer_loops, outer_scope


def _site() -> tuple[str, int]:
    f = sys._getframe(2)
    return (f.f_code.co_filename, f.f_lineno)


def affine_range(*args, **kwargs):
    """Iterations are independent (the compiler may reorder or overlap them)."""
    return _loop(LoopKind.AFFINE, args, _site())


def sequential_range(*args, **kwargs):
    """Iterations carry a dependency and run in order."""
    return _loop(LoopKind.SEQUENTIAL, args, _site())


def static_range(*args, **kwargs):
    """Fully unrolled at trace time (no scope: each iteration's tensors are distinct)."""
    return _loop(LoopKind.STATIC, args, _site())


class KernelRange:
    """Python `range` inside kernel files: the Beta 1 compiler turns a plain `range` loop into a
    `sequential_range` (trainium.md §3.4), so iterating one during a run records a SEQUENTIAL
    LoopFrame. Indices stay plain ints and no tensor scope is opened (it is still Python).
    Outside a run, and for len / indexing / `in` / reversed, it is the builtin range."""

    __slots__ = ("_r",)

    def __init__(self, *args) -> None:
        self._r = range(*args)

    def __iter__(self):
        run = active()
        if run is None:
            return iter(self._r)
        f = sys._getframe(1)
        return self._frames(run, run.loop_id((f.f_code.co_filename, f.f_lineno)))

    def _frames(self, run, loop_id):
        outer = run.loops
        n = len(self._r)
        try:
            for it, value in enumerate(self._r):
                run.loops = outer + (LoopFrame(loop_id, LoopKind.SEQUENTIAL, it, n),)
                yield value
                run.loops = outer
        finally:
            run.loops = outer

    def __len__(self) -> int:
        return len(self._r)

    def __getitem__(self, i):
        return self._r[i]

    def __reversed__(self):
        return reversed(self._r)

    def __contains__(self, x) -> bool:
        return x in self._r

    def __eq__(self, other) -> bool:
        return self._r == (other._r if isinstance(other, KernelRange) else other)

    __hash__ = None

    def __repr__(self) -> str:
        return repr(self._r)

    def __getattr__(self, name):  # start, stop, step, index, count
        return getattr(self._r, name)
