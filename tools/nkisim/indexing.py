"""Index expressions (`nl.arange`, `nl.mgrid`, masks) and how a key selects a tile of a tensor.

An `Index` is a concrete integer array (NumPy-broadcastable, partition axis first) that also
remembers, while it stays an arithmetic progression along one axis, its start and step. Keys made
only of such progressions and ints resolve to a NumPy *basic* index (a strided view, no gather);
anything else (sums of aranges, permuted axes, masked out-of-bounds positions) falls back to a
gather over the valid positions only. Masked-out positions are never read or written, so they may
lie out of bounds (trainium.md §7.3).
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import numpy as np

from .errors import SimCompileError, SimRuntimeError


def _arange_condition_error():
    return SimCompileError(
        "Control flow depending on `nl.arange` or `nl.mgrid` is not supported; use a mask= instead",
        code="err_control_flow_condition_depending_on_arange")


class Predicate:
    """A mask: a boolean array built by comparing index expressions, combined with & | ~."""

    __slots__ = ("values",)
    __array_ufunc__ = None

    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    def _other(self, o):
        return o.values if isinstance(o, Predicate) else o

    def __and__(self, o):
        return Predicate(np.logical_and(self.values, self._other(o)))

    __rand__ = __and__

    def __or__(self, o):
        return Predicate(np.logical_or(self.values, self._other(o)))

    __ror__ = __or__

    def __xor__(self, o):
        return Predicate(np.logical_xor(self.values, self._other(o)))

    def __invert__(self):
        return Predicate(~self.values)

    def __bool__(self):
        raise _arange_condition_error()

    @property
    def shape(self):
        return self.values.shape


def _cmp(fn):
    def method(self, other):
        other = other.values if isinstance(other, Index) else other
        return Predicate(fn(self.values, other))
    return method


class Index:
    """An affine index expression over `nl.arange` values (see module doc)."""

    __slots__ = ("values", "axis", "start", "step")
    __array_ufunc__ = None  # make `np.int64(3) * idx` defer to Index

    def __init__(self, values: np.ndarray, axis: int = -1, start: int = 0, step: int = 0) -> None:
        self.values, self.axis, self.start, self.step = values, axis, start, step

    @property
    def shape(self):
        return self.values.shape

    @property
    def ndim(self):
        return self.values.ndim

    def _const(self, o):
        return isinstance(o, (int, np.integer)) and not isinstance(o, bool)

    def __add__(self, o):
        if self._const(o):
            return Index(self.values + o, self.axis, self.start + int(o), self.step)
        return self._combine(o, operator.add)

    __radd__ = __add__

    def __sub__(self, o):
        if self._const(o):
            return Index(self.values - o, self.axis, self.start - int(o), self.step)
        return self._combine(o, operator.sub)

    def __rsub__(self, o):
        if self._const(o):
            return Index(o - self.values, self.axis, int(o) - self.start, -self.step)
        return self._combine(o, lambda a, b: b - a)

    def __mul__(self, o):
        if self._const(o):
            return Index(self.values * o, self.axis, self.start * int(o), self.step * int(o))
        return self._combine(o, operator.mul)

    __rmul__ = __mul__

    def __neg__(self):
        return Index(-self.values, self.axis, -self.start, -self.step)

    def __floordiv__(self, o):
        return self._combine(o, operator.floordiv)

    def __mod__(self, o):
        return self._combine(o, operator.mod)

    def _combine(self, o, fn):
        if isinstance(o, Index):
            return Index(fn(self.values, o.values))
        if isinstance(o, (int, np.integer)):
            return Index(fn(self.values, o))
        raise SimCompileError(f"unsupported operand in an index expression: {type(o).__name__}",
                              code="err_unsupported_expression_in_index")

    __lt__, __le__ = _cmp(np.less), _cmp(np.less_equal)
    __gt__, __ge__ = _cmp(np.greater), _cmp(np.greater_equal)
    __eq__, __ne__ = _cmp(np.equal), _cmp(np.not_equal)
    __hash__ = object.__hash__

    def __bool__(self):
        raise _arange_condition_error()

    def __index__(self):
        raise _arange_condition_error()

    def __getitem__(self, key):
        """`[:, None]` / `[None, :]` lift an arange to 2-D; the progression axis follows."""
        values = self.values[key]
        key = key if isinstance(key, tuple) else (key,)
        axis, out = -1, 0
        src = 0
        simple = True
        for k in key:
            if k is None:
                out += 1
            elif isinstance(k, slice) and k == slice(None):
                if src == self.axis:
                    axis = out
                src += 1
                out += 1
            else:
                simple = False
        if not simple or src != self.values.ndim or self.axis < 0:
            return Index(values)
        return Index(values, axis, self.start, self.step)

    def __repr__(self):
        return f"Index(shape={self.shape})"


def arange(*args) -> Index:
    """`nl.arange(stop)` / `nl.arange(start, stop[, step])` (lift to 2-D with [:, None])."""
    r = range(*(int(a) for a in args))
    return Index(np.arange(r.start, r.stop, r.step, dtype=np.int64), 0, r.start, r.step)


class Grid(tuple):
    """`nl.mgrid[...]`: open index grids, unpackable, with `.p` (partition) and `.x` (last free)."""

    @property
    def p(self):
        return self[0]

    @property
    def x(self):
        return self[-1]

    @property
    def y(self):
        return self[1]


class _MGrid:
    def __getitem__(self, key) -> Grid:
        key = key if isinstance(key, tuple) else (key,)
        n = len(key)
        out = []
        for d, k in enumerate(key):
            if not isinstance(k, slice):
                raise SimCompileError("nl.mgrid takes slices, e.g. nl.mgrid[0:128, 0:512]",
                                      code="err_unsupported_mgrid")
            r = range(k.start or 0, k.stop, k.step or 1)
            shape = [1] * n
            shape[d] = len(r)
            out.append(Index(np.arange(r.start, r.stop, r.step, dtype=np.int64).reshape(shape),
                             d, r.start, r.step))
        return Grid(out)


mgrid = _MGrid()


def ds(start, size) -> slice:
    """`nl.ds(start, size)`: a dynamic slice (start is a concrete int in the simulator)."""
    return slice(int(start), int(start) + int(size))


# ----------------------------------------------------------------------------------------------
# Selection: how a key picks elements out of a tensor of a given shape.


@dataclass(slots=True)
class Selection:
    """A resolved key. `shape` is the tile shape the key produces (partition axis first).

    `spans[d] = (start, step, count, kept)` describes dim d as a progression when the key is a box;
    `basic` is then the NumPy basic key (None when some span is out of bounds). Otherwise
    `arrays` holds the gather key (broadcast int arrays and ints).
    """

    shape: tuple
    spans: tuple | None
    arrays: tuple | None
    basic: tuple | None
    basic_shape: tuple | None
    oob: str  # why the unmasked box is out of bounds ("" when in bounds)
    axes: tuple = ()  # output axis of each kept span
    stats: tuple | None = None  # cached (region, contiguous elems, inner step) of the box


def _oob(name, d, lo, hi, n):
    return (f"Out-of-bound access for tensor `{name}` on dimension {d}: index range [{lo}, {hi}] "
            f"exceed dimension size of {n}")


_FULL_SELECTIONS: dict = {}


def full_selection(shape: tuple) -> Selection:
    """The selection of a whole tensor: depends on the shape only, so shared."""
    sel = _FULL_SELECTIONS.get(shape)
    if sel is None:
        sel = _FULL_SELECTIONS[shape] = select(shape, None)
    return sel


def select(shape: tuple, key, name: str = "", tile_values=None) -> Selection:
    """Resolve `key` against a tensor of `shape` (no data access; bounds checked lazily)."""
    nd = len(shape)
    if key is None:
        spans = tuple((0, 1, n, True) for n in shape)
        return Selection(tuple(shape), spans, None, tuple(slice(None) for _ in shape),
                         tuple(shape), "", tuple(range(nd)))
    if not isinstance(key, tuple):
        key = (key,)
    basic = True
    for k in key:
        if not isinstance(k, (int, slice)):  # ints include loop indices (LoopVar)
            basic = False
            break
    if basic and len(key) <= nd:
        return _select_basic(shape, key + (slice(None),) * (nd - len(key)), name)
    if any(k is Ellipsis for k in key):
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (nd - len(key) + 1) + key[i + 1:]
    if len(key) > nd:
        raise SimCompileError(f"too many indices for tensor `{name}` of shape {tuple(shape)}: "
                              f"{len(key)} given", code="err_exceed_max_supported_dimension")
    if tile_values is not None:
        key = tuple(tile_values(k) for k in key)
    if any(isinstance(k, Predicate) for k in key):
        from .errors import SimUnsupportedError
        raise SimUnsupportedError(f"operand masks (indexing `{name}` with a predicate)",
                                  "pass mask= to the instruction instead")
    advanced = any(isinstance(k, (Index, np.ndarray)) for k in key)
    if not advanced:
        return _select_basic(shape, key + (slice(None),) * (nd - len(key)), name)
    if len(key) < nd or any(isinstance(k, slice) for k in key):
        raise SimCompileError(
            "Mixing basic tensor indexing and advanced tensor indexing is not supported: index "
            f"tensor `{name}` with nl.arange/nl.mgrid expressions (or ints) on every dimension, "
            "or with slices only", code="err_unsupported_mixing_basic_advanced_tensor_indexing")
    for k in key:
        if isinstance(k, Index) and k.ndim == 1 and nd > 1:
            raise SimCompileError("1-D nl.arange is not supported as an index; lift it to 2-D with "
                                  "[:, None] or [None, :]", code="err_1d_arange_not_supported")
    return _select_advanced(shape, key, name)


def _select_basic(shape, key, name):
    spans, out_shape, oob = [], [], ""
    d = 0
    for k in key:
        n = shape[d]
        if k.__class__ is slice:
            step = k.step
            if step is None:
                step = 1
            elif step <= 0:
                raise SimCompileError(f"negative or zero slice step {step} on tensor `{name}`",
                                      code="err_unsupported_slice_step")
            start, stop = k.start, k.stop
            start = 0 if start is None else (int(start) + n if start < 0 else int(start))
            stop = n if stop is None else (int(stop) + n if stop < 0 else int(stop))
            count = -(-(stop - start) // step) if stop > start else 0
            if count and (start < 0 or start + step * (count - 1) >= n) and not oob:
                oob = _oob(name, d, start, start + step * (count - 1), n)
            spans.append((start, step, count, True))
            out_shape.append(count)
        else:
            i = int(k)
            if i < 0:
                i += n
            if not 0 <= i < n and not oob:
                oob = _oob(name, d, i, i, n)
            spans.append((i, 1, 1, False))
        d += 1
    out_shape = tuple(out_shape)
    # In bounds, NumPy reads the kernel's own key exactly as the spans describe it.
    return Selection(out_shape, tuple(spans), None, None if oob else key, out_shape, oob,
                     _AXES[len(out_shape)])


_AXES = [tuple(range(n)) for n in range(33)]


def _select_advanced(shape, key, name):
    arrays = [k.values if isinstance(k, Index) else k for k in key]
    bshape = np.broadcast_shapes(*(np.shape(a) for a in arrays))
    # Fast path: every index a progression along its own axis, axes increasing.
    spans, last_axis, fast = [], -1, True
    covered = set()
    for d, k in enumerate(key):
        if isinstance(k, Index):
            if k.axis < 0 or k.ndim != len(bshape) or k.axis <= last_axis:
                fast = False
                break
            last_axis = k.axis
            covered.add(k.axis)
            spans.append((k.start, k.step, k.values.shape[k.axis], True))
        elif isinstance(k, (int, np.integer)):
            i = int(k)
            spans.append((i + shape[d] if i < 0 else i, 1, 1, False))
        else:
            fast = False
            break
    if fast and all(bshape[a] == 1 for a in range(len(bshape)) if a not in covered):
        oob = ""
        basic = []
        for d, (s, st, c, kept) in enumerate(spans):
            lo, hi = (s, s + st * (c - 1)) if st >= 0 else (s + st * (c - 1), s)
            if c and (lo < 0 or hi >= shape[d]) and not oob:
                oob = _oob(name, d, lo, hi, shape[d])
            if not kept:
                basic.append(s)
            elif st > 0:
                basic.append(slice(s, s + st * (c - 1) + 1, st))
            elif st < 0:
                stop = s + st * (c - 1) - 1
                basic.append(slice(s, None if stop < 0 else stop, st))
            else:
                fast = False  # constant "progression": gather
        if fast:
            bs = tuple(c for s, st, c, kept in spans if kept)
            axes = tuple(k.axis for k in key if isinstance(k, Index))
            return Selection(tuple(bshape), tuple(spans), None, None if oob else tuple(basic),
                             bs, oob, axes)
    arrays = tuple(np.broadcast_to(a, bshape) if np.ndim(a) else int(a) for a in arrays)
    return Selection(tuple(bshape), None, arrays, None, None, "")


def _gather_key(sel: Selection) -> tuple:
    """Full broadcast index arrays for a selection (used when masks or gathers are involved)."""
    if sel.arrays is not None:
        return tuple(np.broadcast_to(a, sel.shape) if np.ndim(a) else a for a in sel.arrays)
    out = []
    it = iter(sel.axes)
    for s, st, c, kept in sel.spans:
        if kept:
            shp = [1] * len(sel.shape)
            shp[next(it)] = c
            out.append(np.broadcast_to((s + st * np.arange(c)).reshape(shp), sel.shape))
        else:
            out.append(s)
    return tuple(out)


def _check_gather(key, shape, valid, name):
    for d, a in enumerate(key):
        if isinstance(a, np.ndarray):
            v = a if valid is None else a[valid]
            if v.size and (v.min() < 0 or v.max() >= shape[d]):
                raise SimRuntimeError(_oob(name, d, int(v.min()), int(v.max()), shape[d])
                                      + " (unmasked)", code="err_tensor_access_out_of_bound")
        elif not 0 <= a < shape[d]:
            raise SimRuntimeError(_oob(name, d, a, a, shape[d]),
                                  code="err_tensor_access_out_of_bound")


def read(sel: Selection, data: np.ndarray, mask: np.ndarray | None, name: str) -> np.ndarray:
    """The selected tile (shape `sel.shape`); masked-out positions are not read (NaN / 4)."""
    if sel.basic is not None:
        return data[sel.basic].reshape(sel.shape)
    if sel.oob and mask is None:
        raise SimRuntimeError(sel.oob + " (unmasked)", code="err_tensor_access_out_of_bound")
    key = _gather_key(sel)
    if mask is None:
        _check_gather(key, data.shape, None, name)
        return data[key]
    _check_gather(key, data.shape, mask, name)
    out = np.full(sel.shape, np.nan if data.dtype.kind in "fV" else 4, dtype=data.dtype)
    out[mask] = data[tuple(a[mask] if isinstance(a, np.ndarray) else a for a in key)]
    return out


def write(sel: Selection, data: np.ndarray, value: np.ndarray, mask: np.ndarray | None,
          name: str) -> None:
    """Store `value` (already shaped to `sel.shape`) into the selected elements."""
    if sel.basic is not None:
        if mask is None:
            data[sel.basic] = value.reshape(sel.basic_shape) if value.ndim else value
        else:
            target = data[sel.basic].reshape(sel.shape)
            np.copyto(target, np.broadcast_to(value, sel.shape), where=mask, casting="unsafe")
            if isinstance(data, np.ndarray) and not np.shares_memory(target, data):
                data[sel.basic] = target.reshape(sel.basic_shape)
        return
    if sel.oob and mask is None:
        raise SimRuntimeError(sel.oob + " (unmasked)", code="err_tensor_access_out_of_bound")
    key = _gather_key(sel)
    _check_gather(key, data.shape, mask, name)
    value = np.broadcast_to(value, sel.shape)
    if mask is None:
        data[key] = value
    else:
        data[tuple(a[mask] if isinstance(a, np.ndarray) else a for a in key)] = value[mask]


def region(sel: Selection, shape: tuple, mask: np.ndarray | None) -> tuple:
    """Per-dim (start, stop) bounding box of the touched elements, in the tensor's index space."""
    if sel.spans is not None and mask is None:
        out = []
        for s, st, c, kept in sel.spans:
            lo, hi = (s, s + st * (c - 1)) if st >= 0 else (s + st * (c - 1), s)
            out.append((lo, hi + 1))
        return tuple(out)
    key = _gather_key(sel)
    out = []
    for a in key:
        if isinstance(a, np.ndarray):
            v = a if mask is None else a[mask]
            out.append((int(v.min()), int(v.max()) + 1) if v.size else (0, 0))
        else:
            out.append((a, a + 1))
    return tuple(out)


def contiguous_elems(sel: Selection, shape: tuple) -> int:
    """Longest run of consecutive elements in the access (1 for gathers)."""
    if sel.spans is None:
        return 1
    run = 1
    for (s, st, c, kept), n in zip(reversed(sel.spans), reversed(shape)):
        if st != 1 and c > 1:
            break
        run *= c
        if c != n:
            break
    return run


def inner_step(sel: Selection) -> int:
    """Element stride of the innermost kept dim (1 when contiguous or unknown)."""
    if sel.spans is None:
        return 1
    for s, st, c, kept in reversed(sel.spans):
        if kept and c > 1:
            return abs(st)
    return 1


def prod(shape) -> int:
    return math.prod(shape)


def box_stats(sel: Selection, shape: tuple) -> tuple:
    """(region, contiguous elements, innermost step) of an unmasked access, computed once."""
    st = sel.stats
    if st is not None:
        return st
    spans = sel.spans
    if spans is None:
        st = sel.stats = (region(sel, shape, None), 1, 1)
        return st
    nd = len(spans)
    reg = [None] * nd
    contig, growing, inner = 1, True, 0
    for d in range(nd - 1, -1, -1):
        s, step, c, kept = spans[d]
        if step >= 0:
            reg[d] = (s, s + step * (c - 1) + 1)
        else:
            reg[d] = (s + step * (c - 1), s + 1)
        if growing:
            if step != 1 and c > 1:
                growing = False
            else:
                contig *= c
                if c != shape[d]:
                    growing = False
        if not inner and kept and c > 1:
            inner = step if step > 0 else -step
    st = sel.stats = (tuple(reg), contig, inner or 1)
    return st


_FULL: dict = {}


def full_stats(shape: tuple) -> tuple:
    """box_stats of a whole tensor (fresh results), cached per shape."""
    st = _FULL.get(shape)
    if st is None:
        st = _FULL[shape] = (tuple((0, n) for n in shape), math.prod(shape), 1)
    return st
