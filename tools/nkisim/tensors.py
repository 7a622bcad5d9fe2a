"""Tensors in HBM / SBUF / PSUM, views (`t[key]`) and assignment into them.

A `Tensor` owns a NumPy array (None in trace-only mode). Indexing returns a lazy `View`; the key
is resolved, bounds-checked and read only when an instruction uses it with its mask. Results of
instructions are *fresh* tiles: when a fresh tile is assigned into a tensor before anything reads
it, the producing instruction is retargeted to write there (as the compiler does), so the trace
holds one instruction, not an instruction plus a copy.
"""
from __future__ import annotations

import linecache
import math
import re

import numpy as np

from . import dtypes as dt
from . import indexing as ix
from .errors import SimCompileError
from .runtime import Run, active, caller, current
from .storage import make_storage
from .trace import Access, Buffer, Engine

MAX_PARTITIONS = 128  # SBUF/PSUM partitions (trainium.md §1.1)
PSUM_BANK_BYTES = 2048  # one PSUM bank per partition: 512 fp32 (trainium.md §1.1)


class MemorySpace:
    """`nl.sbuf`, `nl.psum`, `nl.hbm` / `nl.private_hbm`, `nl.shared_hbm`."""

    __slots__ = ("name", "trace", "is_hbm", "shared")

    def __init__(self, name: str, trace: Buffer, *, shared: bool = False) -> None:
        self.name, self.trace, self.shared = name, trace, shared
        self.is_hbm = trace is Buffer.HBM

    def __repr__(self) -> str:
        return f"nl.{self.name}"

    # `ncc.sbuf.auto_alloc()` / `mod_alloc(...)`: placement is the simulator's business.
    def auto_alloc(self, *args, **kwargs) -> "MemorySpace":
        return self

    mod_alloc = auto_alloc


SBUF = MemorySpace("sbuf", Buffer.SBUF)
PSUM = MemorySpace("psum", Buffer.PSUM)
HBM = MemorySpace("hbm", Buffer.HBM)
SHARED_HBM = MemorySpace("shared_hbm", Buffer.HBM, shared=True)


class par_dim(int):
    """`nl.par_dim(n)`: marks the partition dim of a shape; dims left of it are block dims."""

    def __repr__(self) -> str:
        return f"par_dim({int(self)})"


OPERATORS: dict = {}  # filled by language.py: Python operators on tiles -> nl.* functions


class _Assigned:
    """Returned by `view += x` so that the following `t[key] = <this>` is a no-op."""

    __slots__ = ()


ASSIGNED = _Assigned()


def _op(name, reverse=False):
    if reverse:
        return lambda self, other: OPERATORS[name](other, self)
    return lambda self, other: OPERATORS[name](self, other)


class _TileOps:
    """Python operators shared by tensors and views (they lower to nl.* instructions)."""

    __slots__ = ()
    __array_ufunc__ = None
    __add__, __radd__ = _op("add"), _op("add", True)
    __sub__, __rsub__ = _op("subtract"), _op("subtract", True)
    __mul__, __rmul__ = _op("multiply"), _op("multiply", True)
    __truediv__, __rtruediv__ = _op("divide"), _op("divide", True)
    __pow__, __rpow__ = _op("power"), _op("power", True)
    __and__, __or__, __xor__ = _op("bitwise_and"), _op("bitwise_or"), _op("bitwise_xor")
    __lt__, __le__ = _op("less"), _op("less_equal")
    __gt__, __ge__ = _op("greater"), _op("greater_equal")
    __eq__, __ne__ = _op("equal"), _op("not_equal")
    __hash__ = object.__hash__

    def __neg__(self):
        return OPERATORS["negative"](self)

    def __abs__(self):
        return OPERATORS["abs"](self)

    def __invert__(self):
        return OPERATORS["invert"](self)

    def __bool__(self):
        raise SimCompileError("The truth value of a tile is ambiguous: tile values are not known "
                              "at compile time", code="err_ambiguous_tensor_truth_value")

    def __iter__(self):
        raise SimCompileError("tiles cannot be iterated; index them with nl.arange or slices",
                              code="err_ambiguous_tensor_truth_value")

    def _inplace(self, other, op):
        assign(as_view(self), other, op=op)
        return ASSIGNED if isinstance(self, View) else self

    def __iadd__(self, other):
        return self._inplace(other, "add")

    def __isub__(self, other):
        return self._inplace(other, "subtract")

    def __imul__(self, other):
        return self._inplace(other, "multiply")

    def __itruediv__(self, other):
        return self._inplace(other, "divide")

    def broadcast_to(self, shape):
        return OPERATORS["broadcast_to"](self, shape)

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 1

    @property
    def ndim(self) -> int:
        return len(self.shape)


_RESULT_LABELS: dict = {}  # producer -> label of its unnamed result tiles


class Tensor(_TileOps):
    """A tensor in one memory space. `data` is None in trace-only mode."""

    __slots__ = ("tid", "shape", "dtype", "space", "data", "name", "pdim", "scope", "role",
                 "fresh", "event", "valid", "_written", "producer", "base", "_full", "root",
                 "lazy_src", "_facc")

    def __init__(self, run: Run | None, shape, dtype, space: MemorySpace, data, *, name="",
                 pdim=0, role="alloc", valid=None, producer="") -> None:
        if run is not None:
            run._ids += 1
            self.tid = run._ids
            self.scope = () if space.is_hbm else run.scope
        else:
            self.tid, self.scope = id(self), ()
        self.shape = shape if shape.__class__ is tuple else tuple(int(s) for s in shape)
        self.dtype, self.space, self.data, self.name = dtype, space, data, name
        self.pdim, self.role, self.valid, self.producer = pdim, role, valid, producer
        self.fresh, self.event, self._written = role == "fresh", None, role != "alloc"
        self.base: Tensor | None = None  # the tensor this one reshapes (shares its bytes)
        self.root = self.tid  # id of the tensor that owns the bytes (reshapes share it)
        self.lazy_src = None  # `root` of the tensor whose bytes `data` still views (see fresh)
        self._full = None
        self._facc = None  # Access of the whole tensor (frozen: built once, shared by events)

    @property
    def buffer(self) -> MemorySpace:
        return self.space

    @property
    def written(self) -> bool:
        return self._written

    @written.setter
    def written(self, value: bool) -> None:
        self._written = value
        if value and self.base is not None:
            self.base.written = True

    @property
    def label(self) -> str:
        """Name for messages: the kernel's name, else what produced the tile."""
        if self.name:
            return self.name
        label = _RESULT_LABELS.get(self.producer)  # read per instruction: no f-string each time
        if label is None:
            p = self.producer
            label = _RESULT_LABELS[p] = f"<result of {p}>" if p else "<tile>"
        return label

    def __getitem__(self, key) -> "View":
        return View(self, key)

    def __setitem__(self, key, value) -> None:
        if value is ASSIGNED:
            return
        assign(View(self, key), value)

    def reshape(self, shape) -> "Tensor":
        """HBM tensors may be reshaped (a new view of the same bytes)."""
        shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        if not self.space.is_hbm:
            raise SimCompileError(f"reshape of on-chip tensor `{self.name}` is not supported; only "
                                  "HBM tensors can be reshaped", code="err_unsupported_reshape")
        if math.prod(shape) != math.prod(self.shape):
            raise SimCompileError(f"cannot reshape tensor `{self.name}` of shape {self.shape} into "
                                  f"{shape}", code="err_unsupported_reshape")
        data = None if self.data is None else self.data.reshape(shape)
        out = Tensor(active(), shape, self.dtype, self.space, data, name=self.name, role=self.role)
        out._written = self._written
        out.base, out.root = self, self.root
        return out

    def full_selection(self) -> ix.Selection:
        if self._full is None:
            self._full = ix.full_selection(self.shape)
        return self._full

    def __repr__(self) -> str:
        return f"Tensor({self.name or self.tid}, shape={self.shape}, {self.dtype}, {self.space})"


class View(_TileOps):
    """`tensor[key]`: the key is resolved at once, bounds and data are touched only when an
    instruction uses the view (with its mask)."""

    __slots__ = ("tensor", "key", "sel", "shape")

    def __init__(self, tensor: Tensor, key, sel: ix.Selection | None = None) -> None:
        self.tensor, self.key = tensor, key
        if sel is None:
            sel = ix.select(tensor.shape, key, tensor.label, _index_tile_values)
        self.sel, self.shape = sel, sel.shape

    @property
    def dtype(self):
        return self.tensor.dtype

    @property
    def space(self) -> MemorySpace:
        return self.tensor.space

    buffer = space

    def __getitem__(self, key) -> "View":
        base = self.key if isinstance(self.key, tuple) else (self.key,)
        if self.key is not None and all(isinstance(k, (int, np.integer)) for k in base):
            return View(self.tensor, base + (key if isinstance(key, tuple) else (key,)))
        if self.key is None:
            return View(self.tensor, key)
        raise SimCompileError("nested indexing of a sliced tensor is not supported; index the "
                              "tensor once", code="err_unsupported_nested_indexing")

    def __setitem__(self, key, value) -> None:
        if value is ASSIGNED:
            return
        assign(self[key], value)

    # ------------------------------------------------------------------ instruction operands
    def read(self, mask=None):
        """The tile's values (None in trace-only mode); consumes a fresh tile."""
        t = self.tensor
        t.fresh = False
        if t.data is None:
            return None
        return ix.read(self.sel, t.data, mask, t.label)

    def write(self, value, mask=None) -> None:
        t = self.tensor
        t.written = True
        if t.data is None or value is None:
            return
        if t.lazy_src is not None:
            _materialize(t)
        run = active()
        if run is not None and run.lazy:
            for p in run.lazy.pop(t.root, ()):
                if p.lazy_src is not None:
                    _materialize(p)
        ix.write(self.sel, t.data, fit(value, self.sel.shape, t.label), mask, t.label)

    def access(self, mask=None) -> Access:
        t = self.tensor
        if mask is None:
            if self.key is None:
                return full_access(t)
            spans = self.sel.spans
            run = active()
            if spans is not None and run is not None:
                # the same box of the same tensor: the same (frozen) Access
                cache = run.access_cache
                ckey = (t.tid, spans)
                acc = cache.get(ckey)
                if acc is None:
                    acc = cache[ckey] = self._access(None)
                return acc
        return self._access(mask)

    def _access(self, mask) -> Access:
        t = self.tensor
        sel = self.sel
        shape = sel.shape
        parts = shape[0] if shape else 1
        n = math.prod(shape)
        isz = t.dtype.itemsize
        if mask is None:
            reg, contig, step = ix.box_stats(sel, t.shape)
        else:
            n = int(np.count_nonzero(mask))
            parts = int(np.count_nonzero(mask.reshape(shape[0], -1).any(axis=1))) if shape else 1
            reg, contig, step = (ix.region(sel, t.shape, mask), ix.contiguous_elems(sel, t.shape),
                                 ix.inner_step(sel))
        return Access(t.tid, t.space.trace, dt.name(t.dtype), n * isz, parts,
                      n // parts if parts else 0, reg, contig * isz, t.name,
                      0 if t.space.is_hbm else step * isz)

    def check_scope(self, run: Run) -> None:
        scope = self.tensor.scope
        if scope and scope is not run.scope and run.scope[:len(scope)] != scope:
            raise SimCompileError(
                f"Local variable `{self.tensor.label}` is referenced outside of its parent "
                "scope (a tensor created inside a loop body is used after the loop); allocate it "
                "before the loop", code="err_local_variable_used_out_of_scope")

    def __repr__(self) -> str:
        return f"View({self.tensor!r}[{self.key!r}])"


def full_access(t: Tensor) -> Access:
    """Access of a whole tensor without a mask (the common case for fresh results)."""
    if t._facc is not None:
        return t._facc
    # Every field but the id and the name depends on (shape, dtype, space) only: cached.
    ckey = (t.shape, t.dtype, t.space)
    f = _FULL_ACCESS_FIELDS.get(ckey)
    if f is None:
        reg, n, _ = ix.full_stats(t.shape)
        isz = t.dtype.itemsize
        parts = t.shape[0] if t.shape else 1
        f = _FULL_ACCESS_FIELDS[ckey] = (t.space.trace, dt.name(t.dtype), n * isz, parts,
                                         n // parts if parts else 0, reg, n * isz,
                                         0 if t.space.is_hbm else isz)
    t._facc = Access(t.tid, f[0], f[1], f[2], f[3], f[4], f[5], f[6], t.name, f[7])
    return t._facc


_FULL_ACCESS_FIELDS: dict = {}  # (shape, dtype, space) -> full_access fields, see above


def _index_tile_values(k):
    """An SBUF tile used as an index (indirect DMA): its values become a gather index."""
    if isinstance(k, (Tensor, View)):
        v = as_view(k)
        vals = v.read()
        if vals is None:  # trace-only: the index values are unknown; assume the first rows
            return ix.Index(np.arange(v.shape[0]).reshape(v.shape[0], *([1] * (len(v.shape) - 1))))
        return ix.Index(np.asarray(vals).astype(np.int64))
    return k


def as_view(x) -> View:
    if isinstance(x, View):
        return x
    if isinstance(x, Tensor):
        return View(x, None, x.full_selection())
    raise TypeError(f"expected a tensor or tile, got {type(x).__name__}")


def is_tile(x) -> bool:
    return isinstance(x, (Tensor, View))


def _squeezed(shape: tuple) -> tuple:
    return tuple(n for n in shape if n != 1)


def _same_layout(src: tuple, dst: tuple) -> bool:
    """Equal up to unit dims ([128, 1, 512] vs [128, 512]), partition dim first in both."""
    return (bool(src) and bool(dst) and src[0] == dst[0]
            and _squeezed(src[1:]) == _squeezed(dst[1:]))


def fit(value: np.ndarray, shape: tuple, name: str = "") -> np.ndarray:
    """Shape `value` for a destination of `shape`: 1-D results act as [P, 1] partition vectors;
    the source may broadcast into a larger destination, never the reverse (trainium.md §7.1)."""
    if value.shape == shape:
        return value
    v = np.asarray(value)
    if _same_layout(v.shape, shape):
        return v.reshape(shape)
    fit_shape(v.shape, shape, name)
    v = v.reshape(v.shape + (1,) * (len(shape) - v.ndim)) if v.ndim < len(shape) else v
    return np.broadcast_to(v, shape)


def fit_shape(src: tuple, dst: tuple, name: str = "") -> None:
    """Raise unless a tile of shape `src` can be assigned into `dst` (see `fit`)."""
    if src == dst or _same_layout(src, dst):
        return
    s = tuple(src) + (1,) * (len(dst) - len(src))
    if len(s) != len(dst) or any(a != b and a != 1 for a, b in zip(s, dst)):
        raise SimCompileError(f"Illegal assignment destination shape: cannot assign a tile of shape "
                              f"{list(src)} into `{name}`{list(dst)}",
                              code="err_illegal_assignment_shape")


def tile_bytes_per_partition(shape: tuple, pdim: int, dtype) -> int:
    return math.prod(shape[pdim + 1:]) * dtype.itemsize


_ASSIGNED_NAME = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=[^=]")


def _name_from_source(site: tuple[str, int]) -> str:
    """`acc` for `acc = nl.zeros(...)`: the kernel's own name for an allocation, for messages."""
    m = _ASSIGNED_NAME.match(linecache.getline(site[0], site[1])) if site[1] else None
    return m.group(1) if m else ""


def allocate(shape, dtype, space: MemorySpace, *, name: str = "", fill=None,
             role: str = "alloc") -> Tensor:
    """A new tensor; fresh memory is NaN (ints: 4) unless `fill` is given (trainium.md §7.6)."""
    run = current()
    site = caller()
    name = name or _name_from_source(site)
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(shape)
    dtype = dt.to_dtype(dtype)
    pdims = [i for i, s in enumerate(shape) if isinstance(s, par_dim)]
    pdim = pdims[0] if pdims else 0
    shape = tuple(int(s) for s in shape)
    if any(s <= 0 for s in shape):
        raise SimCompileError(f"tensor `{name}` has a non-positive dimension in shape {shape}",
                              code="err_invalid_shape")
    if space is SHARED_HBM and run.scope:
        raise SimCompileError(f"nl.shared_hbm tensor `{name or 'tensor'}` must be created at the "
                              "kernel's top level, not inside an affine_range / sequential_range "
                              "loop", code="err_shared_hbm_must_in_kernel_level")
    if space is SHARED_HBM and run.shared_cursor < len(run.shared):
        t = run.shared[run.shared_cursor]  # the same shared_hbm tensor in every SPMD program
        run.shared_cursor += 1
        return t
    if not space.is_hbm:
        check_partitions(shape[pdim] if shape else 1, f"tensor `{name}`" if name else "tensor")
        per_part = tile_bytes_per_partition(shape, pdim, dtype)
        if space is PSUM and per_part > PSUM_BANK_BYTES:
            raise SimCompileError(
                f"PSUM tile `{name}` of shape {shape} needs {per_part} bytes per partition; a PSUM "
                f"tile holds at most {PSUM_BANK_BYTES} bytes per partition (one bank: 512 fp32)",
                code="err_psum_tile_exceed_bank_size")
    data = None
    if run.compute:
        data = make_storage(shape, dtype, pdim, dt.fill_value(dtype) if fill is None else fill)
    t = Tensor(run, shape, dtype, space, data, name=name, pdim=pdim, role=role)
    if fill is not None:
        t.written = True
    if not space.is_hbm:
        run.memory.allocate(t.tid, space.name, per_part, name or "tile", site,
                            per_part * math.prod(shape[:pdim]))
    elif space is SHARED_HBM:
        run.shared.append(t)
        run.shared_cursor += 1
    return t


def check_partitions(n: int, what: str) -> None:
    if n > MAX_PARTITIONS:
        raise SimCompileError(f"Size of partition dimension {n} exceeds architecture limitation of "
                              f"{MAX_PARTITIONS} ({what})", code="err_num_partition_exceed_arch_limit")


def _materialize(t: Tensor) -> None:
    t.data = np.array(t.data)
    t.lazy_src = None


def fresh(run: Run, shape, dtype, space: MemorySpace, value, *, mask=None, producer="",
          source: Tensor | None = None) -> Tensor:
    """The result tile of an instruction. Masked-out positions stay uninitialised.

    A pure data movement (load, copy, transpose) may pass `source`: its result then keeps viewing
    the source's bytes, copied only when someone is about to write them (`View.write`) -- so
    `t[...] = nl.load(...)` copies once, not twice, and loads of read-only inputs never copy.
    """
    if shape.__class__ is not tuple:
        shape = tuple(shape)
    if shape and shape[0] > MAX_PARTITIONS:
        check_partitions(shape[0], producer or "instruction result")
    data = None
    lazy = None
    if run.compute and value is not None:
        value = np.asarray(value)
        if value.shape != shape:
            value = fit(value, shape)
        if mask is None:
            data = value.astype(dtype, copy=False) if value.dtype != dtype else value
            if data.base is not None and not data.flags.owndata:
                if source is None:
                    data = np.array(data, dtype=dtype)
                else:
                    lazy = source.root
            elif not data.flags.writeable:
                data = np.array(data, dtype=dtype)
        else:
            data = np.full(shape, dt.fill_value(dtype), dtype=dtype)
            np.copyto(data, value, where=mask, casting="unsafe")
    t = Tensor(run, shape, dtype, space, data, role="fresh", valid=mask, producer=producer)
    if lazy is not None:
        t.lazy_src = lazy
        if source.role != "param":  # immutable inputs are never written: nothing to watch
            run.lazy.setdefault(lazy, []).append(t)
    run.memory.allocate(t.tid, space.name, math.prod(shape[1:]) * dtype.itemsize,  # per partition
                        t.label, ("", 0))
    return t


def emit_result(run: Run, op: str, engine: Engine, reads: list, value, shape, dtype, *,
                mask=None, space: MemorySpace = SBUF, producer: str = "", attrs=None,
                extra_writes: tuple = (), event_dtype=None, source=None) -> Tensor:
    """Create the fresh result tile of an instruction and append its trace event.

    `reads` are (View, mask) pairs of the operands (already read by the caller).
    """
    out = fresh(run, shape, dtype, space, value, mask=mask, producer=producer, source=source)
    if run.trace is not None:
        acc = tuple([v.access(m) for v, m in reads])
        w = (full_access(out) if mask is None else as_view(out).access(mask),) + extra_writes
        out.event = run.emit(op, engine, acc, w, dt.name(event_dtype or dtype),
                             shape[0] if shape else 1,
                             math.prod(shape[1:]), attrs)
    return out


_ACCUMULATE_INTO_PSUM = {"nisa.nc_matmul", "nl.matmul", "nisa.nc_transpose", "nl.transpose"}
_ALU = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide}


def assign(dst: View, value, *, op: str | None = None) -> None:
    """`dst = value` (op None) or `dst <op>= value` into an SBUF / PSUM tensor."""
    run = current()
    t = dst.tensor
    if t.space.is_hbm:
        raise SimCompileError(f"cannot assign into HBM tensor `{t.name}`; use nl.store(dst, value=...)"
                              " (or nisa.dma_copy)", code="err_unsupported_memory")
    dst.check_scope(run)
    run.memory.touch(t.tid)
    sel = dst.sel
    if is_tile(value):
        if value.__class__ is Tensor and value.fresh and (
                op is None or (op == "add" and t.space is PSUM and
                               value.producer in _ACCUMULATE_INTO_PSUM)):
            fit_shape(value.shape, sel.shape, t.name)
            _retarget(run, dst, value, accumulate=op is not None)
            return
        src = as_view(value)
        fit_shape(src.shape, sel.shape, t.name)
        src.check_scope(run)
        run.memory.touch(src.tensor.tid)
        cur = dst.read() if op is not None and run.compute else None
        vals = src.read()
        if run.compute:
            vals = fit(vals, sel.shape, t.name)
            dst.write(vals if op is None else _ALU[op](cur.astype(np.float32), vals), None)
        if run.trace is not None:
            reads = (src.access(),) if op is None else (dst.access(), src.access())
            if op is None:
                name, engine = "tensor_copy", (Engine.SCALAR if src.space is PSUM else Engine.VECTOR)
            else:
                name, engine = "tensor_tensor", Engine.VECTOR
            run.emit(name, engine, reads, (dst.access(),), dt.name(t.dtype), sel.shape[0] if sel.shape
                     else 1, math.prod(sel.shape[1:]), {"op": op or "copy", "api": "assign"})
        t.written = True
        return
    if not isinstance(value, (int, float, np.integer, np.floating, bool)):
        raise SimCompileError(f"cannot assign a {type(value).__name__} into tensor `{t.name}`",
                              code="err_illegal_assignment_shape")
    if run.compute:
        if op is None:
            dst.write(np.asarray(value, dtype=t.dtype), None)
        else:
            dst.write(_ALU[op](dst.read().astype(np.float32), np.float32(value)), None)
    if run.trace is not None:
        reads = () if op is None else (dst.access(),)
        run.emit("memset" if op is None else "tensor_scalar", Engine.VECTOR, reads,
                 (dst.access(),), dt.name(t.dtype), sel.shape[0] if sel.shape else 1,
                 math.prod(sel.shape[1:]), {"op": op or "memset", "api": "assign"})
    t.written = True


def _accumulate_in_place(run: Run, dst: View, vals: np.ndarray) -> bool:
    """`dst += vals` for fp32 tiles (PSUM accumulation): the same fp32 sums as
    `dst.write(dst.read() + vals)`, without the temporary and the copy back. False (nothing
    done) unless the destination is a plain fp32 array, in bounds, whose bytes no tile views."""
    t = dst.tensor
    data, basic = t.data, dst.sel.basic
    if (data.__class__ is not np.ndarray or data.dtype != np.float32 or basic is None
            or vals.dtype != np.float32 or t.lazy_src is not None or t.root in run.lazy):
        return False
    target = data[basic]  # basic indexing: a view of the destination's bytes
    np.add(target, vals.reshape(target.shape), out=target)
    t.fresh = False  # as `dst.read()` leaves it (the caller marks the tensor written)
    return True


def _retarget(run: Run, dst: View, v: Tensor, *, accumulate: bool) -> None:
    """Make the instruction that produced fresh tile `v` write `dst` directly."""
    t = dst.tensor
    if v.producer == "nisa.nc_matmul" and t.space is not PSUM:
        raise SimCompileError(
            f"Expected the result of 'nc_matmul' to be in address space 'psum', but it is assigned "
            f"to `{t.name}` in '{t.space.name}'; accumulate in a buffer=nl.psum tile and copy it out "
            "with nl.copy / nisa.tensor_copy", code="err_unsupported_memory")
    if v.producer in ("nl.load", "nl.load_transpose2d") and t.space is PSUM:
        raise SimCompileError(f"DMA cannot write PSUM: load into an SBUF tile instead of `{t.label}`",
                              code="err_unsupported_memory")
    v.fresh = False
    run.memory.forget(v.tid)
    mask = v.valid
    if run.compute and v.data is not None:
        vals = fit(v.data, dst.sel.shape, t.name)
        if not (accumulate and mask is None and _accumulate_in_place(run, dst, vals)):
            if accumulate:
                vals = dst.read().astype(np.float32, copy=False) + vals  # `+` makes a new array
            dst.write(vals, mask)
    t.written = True
    if run.trace is not None and v.event is not None:
        # The event was appended by this run a moment ago and nobody has seen it yet: rewrite it
        # in place rather than rebuilding a frozen TraceEvent.
        ev = run.trace[v.event]
        ev.attrs["accumulate"] = accumulate
        object.__setattr__(ev, "writes", (dst.access(mask),) + ev.writes[1:])
