"""The legacy `neuronxcc.nki.language` surface (nl.*) on NumPy.

Element-wise operators come from the tables in `alu.py`: a tile with a tile lowers to
`tensor_tensor` (VectorE), a tile with a scalar or [P, 1] vector to `tensor_scalar`, a unary
function to `activation` (ScalarE). Names not defined here raise `SimUnsupportedError`.
"""
from __future__ import annotations

import builtins as _b
import math

import numpy as np

from . import dtypes as _dt
from . import operands as _o
from .alu import ACTIVATIONS, BINARY, binary_op
from .capacity import CAPACITY
from .dtypes import (bfloat16, bool_, float8_e4m3, float8_e4m3fn, float8_e5m2, float16,  # noqa: F401
                     float32, int8, int16, int32, tfloat32, uint8, uint16, uint32)  # (nl.* names)
from .errors import SimCompileError, SimUnsupportedError
from .indexing import Predicate, arange, ds, mgrid  # noqa: F401 - nl.arange, nl.ds, nl.mgrid
from .loops import LoopVar, affine_range, sequential_range, static_range  # noqa: F401 - nl.*
from .runtime import current
from .tensors import (HBM, OPERATORS, PSUM, SBUF, SHARED_HBM, Tensor, allocate, as_view,  # noqa: F401
                      emit_result, is_tile, par_dim)  # par_dim is nl.par_dim
from .trace import Engine

sbuf, psum, hbm, shared_hbm = SBUF, PSUM, HBM, SHARED_HBM
private_hbm = HBM



class tile_size:
    """`nl.tile_size`: hardware tile limits (trainium.md §3.2)."""

    pmax = 128
    psum_fmax = 512
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    bn_stats_fmax = 512
    psum_num_banks = 8
    psum_min_align = 4
    sbuf_min_align = 4
    total_available_sbuf_size = CAPACITY["trn1"].sbuf_bytes_per_partition


# ------------------------------------------------------------------------------ SPMD
def program_id(axis: int = 0) -> int:
    run = current()
    if not 0 <= axis < _b.max(len(run.grid), 1):
        raise SimCompileError(f"nl.program_id({axis}): the launch grid has {len(run.grid)} axes",
                              code="err_invalid_program_axis")
    return run.program_id[axis] if run.grid else 0


def num_programs(axes=None) -> int:
    run = current()
    grid = run.grid or (1,)
    if axes is None:
        return math.prod(grid)
    if isinstance(axes, (list, tuple)):
        return math.prod(grid[a] for a in axes)
    return grid[axes]


def program_ndim() -> int:
    return len(current().grid)


def nc(n: int) -> int:
    """`nl.nc(n)`: n physical cores along a grid axis (the simulator runs them serially)."""
    return int(n)


def spmd_dim(*dims) -> int:
    return math.prod(int(d) for d in dims)


# ------------------------------------------------------------------------------ creation
def ndarray(shape, dtype=float32, *, buffer=None, name: str = "", **kwargs) -> Tensor:
    """Uninitialised tensor (NaN-filled so reads of unwritten memory show up)."""
    return allocate(shape, dtype, buffer or SBUF, name=name)


def _filled(shape, dtype, buffer, name, fill, lazy=False) -> Tensor:
    space = buffer or SBUF
    if space.is_hbm:
        raise SimCompileError(f"HBM tensor `{name}` cannot be created with an initial value; create "
                              "it with nl.ndarray and store into it",
                              code="err_hbm_tensor_with_init_value_not_supported")
    t = allocate(shape, dtype, space, name=name, fill=fill)
    run = current()
    if run.trace is not None and space is SBUF and not lazy:
        v = as_view(t)
        run.emit("memset", Engine.VECTOR, (), (v.access(),), _dt.name(t.dtype),
                 t.shape[t.pdim], math.prod(t.shape[t.pdim + 1:]), {"value": fill, "api": "nl.zeros"})
    return t


def zeros(shape, dtype=float32, *, buffer=None, name: str = "", lazy_initialization=False,
          **kwargs) -> Tensor:
    return _filled(shape, dtype, buffer, name, 0, lazy_initialization)


def ones(shape, dtype=float32, *, buffer=None, name: str = "", **kwargs) -> Tensor:
    return _filled(shape, dtype, buffer, name, 1)


def full(shape, fill_value, dtype=float32, *, buffer=None, name: str = "", **kwargs) -> Tensor:
    return _filled(shape, dtype, buffer, name, fill_value)


def zeros_like(a, dtype=None, *, buffer=None, name: str = "", **kwargs) -> Tensor:
    return zeros(a.shape, dtype or a.dtype, buffer=buffer or SBUF, name=name)


def ones_like(a, dtype=None, *, buffer=None, name: str = "", **kwargs) -> Tensor:
    return ones(a.shape, dtype or a.dtype, buffer=buffer or SBUF, name=name)


def empty_like(a, dtype=None, *, buffer=None, name: str = "", **kwargs) -> Tensor:
    return ndarray(a.shape, dtype or a.dtype, buffer=buffer or SBUF, name=name)


def full_like(a, fill_value, dtype=None, *, buffer=None, name: str = "", **kwargs) -> Tensor:
    return full(a.shape, fill_value, dtype or a.dtype, buffer=buffer or SBUF, name=name)


def shared_constant(constant, dtype=None, **kwargs) -> Tensor:
    """An HBM constant built from a NumPy array at trace time."""
    run = current()
    arr = np.asarray(constant)
    d = _dt.to_dtype(dtype if dtype is not None else arr.dtype)
    t = Tensor(run, arr.shape, d, SHARED_HBM, arr.astype(d) if run.compute else None,
               name="shared_constant", role="const")
    return t


def shared_identity_matrix(n: int, dtype=uint8, **kwargs) -> Tensor:
    run = current()
    key = ("identity", int(n), _dt.to_dtype(dtype))
    if key not in run.constants:
        run.constants[key] = shared_constant(np.eye(int(n)), dtype)
    return run.constants[key]


# ------------------------------------------------------------------------------ DMA
def load(src, *, mask=None, dtype=None, **kwargs) -> Tensor:
    """HBM -> a new SBUF tile (partition axis first, at most 128 partitions)."""
    run = current()
    v = _o.hbm(src, "load", "src")
    m = _o.mask_for(v.shape, mask)
    vals = v.read(m) if run.compute else None
    d = _dt.to_dtype(dtype) if dtype is not None else v.dtype
    return emit_result(run, "load", Engine.DMA, [(v, m)], vals, v.shape, d, mask=m,
                       producer="nl.load", attrs={"api": "nl.load"}, source=v.tensor)


def store(dst, value, *, mask=None, **kwargs) -> None:
    """A tile (or scalar) -> HBM."""
    run = current()
    d = _o.hbm(dst, "store", "dst")
    t = d.tensor
    _o.writable_hbm(d, "store")
    m = _o.mask_for(d.shape, mask)
    reads = ()
    if is_tile(value):
        s = as_view(value)
        if s.tensor.space.is_hbm:
            raise SimCompileError("Expected operand 'value' of 'store' to be in address space "
                                  "'sbuf' or 'psum', but got a tile in 'hbm' instead",
                                  code="err_unsupported_memory")
        s.check_scope(run)
        run.memory.touch(s.tensor.tid)
        from .tensors import fit_shape
        fit_shape(s.shape, d.shape, t.name)
        vals = s.read()
        reads = (s.access(m if s.shape == d.shape else None),) if run.trace is not None else ()
        src_dtype = s.dtype
        from_psum = s.tensor.space is PSUM
    elif isinstance(value, _o.SCALARS):
        vals, src_dtype, from_psum = np.asarray(value), t.dtype, False
    else:
        raise SimCompileError(f"store value must be a tile or a scalar, got {type(value).__name__}",
                              code="err_unsupported_memory")
    if run.compute and vals is not None:
        d.write(np.asarray(vals).astype(t.dtype, copy=False), m)
    t.written = True
    if run.trace is not None:
        run.emit("store", Engine.DMA, reads, (d.access(m),), _dt.name(src_dtype),
                 d.shape[0] if d.shape else 1, _o.free_size(d.shape),
                 {"api": "nl.store", "from_psum": from_psum})


def load_transpose2d(src, *, mask=None, dtype=None, **kwargs) -> Tensor:
    """HBM [F, P] -> SBUF [P, F] through the DMA engine (slow on trn1, trainium.md §2.3)."""
    run = current()
    v = _o.hbm(src, "load_transpose2d", "src")
    if len(v.shape) != 2:
        raise SimCompileError(f"load_transpose2d expects a 2-D source, got shape {list(v.shape)}",
                              code="err_exceed_max_supported_dimension")
    shape = (v.shape[1], v.shape[0])
    m = _o.mask_for(shape, mask)
    vals = v.read(None if m is None else m.T)
    d = _dt.to_dtype(dtype) if dtype is not None else v.dtype
    return emit_result(run, "load_transpose2d", Engine.DMA, [(v, None if m is None else m.T)],
                       None if vals is None else vals.T, shape, d, mask=m,
                       producer="nl.load_transpose2d", attrs={"api": "nl.load_transpose2d",
                                                             "transpose": True})


def atomic_rmw(dst, value, op, *, mask=None, **kwargs) -> None:
    """HBM read-modify-write: dst = op(dst, value)."""
    run = current()
    d = _o.hbm(dst, "atomic_rmw", "dst")
    _o.writable_hbm(d, "atomic_rmw")
    alu = binary_op(op, "atomic_rmw")
    s = _o.on_chip(value, "atomic_rmw", "value", run) if is_tile(value) else None
    m = _o.mask_for(d.shape, mask)
    if run.compute:
        cur = _o.value(d, m)
        new = alu.fn(cur, _o.value(s) if s is not None else np.float32(value))
        d.write(new.astype(d.dtype), m)
    d.tensor.written = True
    if run.trace is not None:
        reads = (d.access(m),) + ((s.access(),) if s is not None else ())
        run.emit("atomic_rmw", Engine.DMA, reads, (d.access(m),), _dt.name(d.dtype), d.shape[0],
                 _o.free_size(d.shape), {"op": alu.name})


# ------------------------------------------------------------------------------ element-wise
class _Binary:
    """nl.add, nl.multiply, ...: `f(x, y, *, dtype=None, mask=None)`."""

    def __init__(self, name: str) -> None:
        self.nki_name = self.__name__ = name
        self.op = BINARY[name]

    def __call__(self, x, y, *, dtype=None, mask=None, **kwargs):
        return binary(self.op, x, y, dtype=dtype, mask=mask, api=f"nl.{self.nki_name}")

    def __repr__(self) -> str:
        return f"nl.{self.nki_name}"


def binary(op, x, y, *, dtype=None, mask=None, api="nl.binary"):
    tx, ty = is_tile(x), is_tile(y)
    if not (tx or ty):
        return op.fn(x, y)
    run = current()
    vx = _o.on_chip(x, api, "x", run) if tx else None
    vy = _o.on_chip(y, api, "y", run) if ty else None
    shapes = [v.shape for v in (vx, vy) if v is not None]
    shape = _o.broadcast_shape(*shapes)
    nd = len(shape)
    if dtype is None and op.kind in ("compare", "logical"):
        dtype = bool_
    d = _o.out_dtype(dtype, vx if tx else x, vy if ty else y)
    m = _o.mask_for(shape, mask)
    val = None
    if run.compute:
        a = _o.value(vx, None, nd) if tx else np.float32(x) if isinstance(x, float) else x
        b = _o.value(vy, None, nd) if ty else np.float32(y) if isinstance(y, float) else y
        with np.errstate(all="ignore"):
            val = op.fn(a, b)
    both = tx and ty
    engine = Engine.GPSIMD if op.name == "power" and both else Engine.VECTOR
    reads = [(v, m if v.shape == shape else None) for v in (vx, vy) if v is not None]
    return emit_result(run, "tensor_tensor" if both else "tensor_scalar", engine, reads, val,
                       shape, d, mask=m, producer=api, attrs={"op": op.name, "api": api})


class _Unary:
    """nl.exp, nl.tanh, ...: an ACT `activation` instruction."""

    def __init__(self, name: str) -> None:
        self.nki_name = self.__name__ = name

    def __call__(self, x, *, dtype=None, mask=None, **kwargs):
        return unary(self.nki_name, x, dtype=dtype, mask=mask)

    def __repr__(self) -> str:
        return f"nl.{self.nki_name}"


_VECTOR_UNARY = {"logical_not", "invert", "abs", "negative", "sign", "trunc", "floor", "ceil"}


def unary(name: str, x, *, dtype=None, mask=None):
    api = f"nl.{name}"
    if not is_tile(x):
        return ACTIVATIONS[name](np.float32(x)) if name in ACTIVATIONS else ~x
    run = current()
    v = _o.on_chip(x, api, "x", run)
    d = _dt.to_dtype(dtype) if dtype is not None else (bool_ if name == "logical_not" else v.dtype)
    m = _o.mask_for(v.shape, mask)
    val = None
    if run.compute:
        a = _o.value(v)
        with np.errstate(all="ignore"):
            val = np.invert(a) if name == "invert" else ACTIVATIONS[name](a)
    engine = Engine.VECTOR if name in _VECTOR_UNARY else Engine.SCALAR
    op = "tensor_scalar" if engine is Engine.VECTOR else "activation"
    return emit_result(run, op, engine, [(v, m)], val, v.shape, d, mask=m, producer=api,
                       attrs={"func": name, "api": api})


def copy(src, *, mask=None, dtype=None, **kwargs):
    """Copy into a new SBUF tile (PSUM evictions; AccelOpt's profiles put them on ScalarE)."""
    run = current()
    v = _o.on_chip(src, "copy", "src", run)
    m = _o.mask_for(v.shape, mask)
    val = v.read() if run.compute else None
    d = _dt.to_dtype(dtype) if dtype is not None else v.dtype
    engine = Engine.SCALAR if v.tensor.space is PSUM else Engine.VECTOR
    return emit_result(run, "tensor_copy", engine, [(v, m)], val, v.shape, d, mask=m,
                       producer="nl.copy", attrs={"api": "nl.copy"}, source=v.tensor)


copy.nki_name = "copy"

# ------------------------------------------------------------------------------ reductions
_REDUCE = {"sum": "add", "max": "maximum", "min": "minimum", "prod": "multiply",
           "all": "logical_and", "mean": "add", "var": "add"}


def _axes(axis, nd: int, api: str) -> tuple:
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = tuple(int(a) % nd for a in axes)
    if 0 in axes:
        raise SimCompileError(f"{api}: cannot reduce along the partition axis 0; reduce free axes "
                              "(axis=1, ...) or use nisa.tensor_partition_reduce",
                              code="err_unsupported_reduction_axis")
    return axes


def reduce(name: str, x, axis, *, dtype=None, mask=None, keepdims=False, negate=False,
           api=None):
    api = api or f"nl.{name}"
    run = current()
    v = _o.on_chip(x, api, "x", run)
    axes = _axes(axis, len(v.shape), api)
    shape = tuple(1 if i in axes else n for i, n in enumerate(v.shape) if keepdims or i not in axes)
    m = _o.mask_for(v.shape, mask)
    d = _dt.to_dtype(dtype) if dtype is not None else (bool_ if name == "all" else v.dtype)
    val = None
    if run.compute:
        a = _o.value(v)
        if m is not None:
            a = np.where(m, a, np.float32(_IDENTITY[name]))
        fn = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod, "all": np.all,
              "mean": np.mean, "var": np.var}[name]
        val = fn(a, axis=axes, keepdims=keepdims)
        if negate:
            val = -val
    return emit_result(run, "tensor_reduce", Engine.VECTOR, [(v, m)], val, shape, d,
                       producer=api, attrs={"op": _REDUCE[name], "api": api, "axis": axes})


_IDENTITY = {"sum": 0.0, "mean": 0.0, "var": 0.0, "prod": 1.0, "max": -np.inf, "min": np.inf,
             "all": 1.0}


def _reduction(name: str):
    def fn(x, axis, *, dtype=None, mask=None, keepdims=False, **kwargs):
        return reduce(name, x, axis, dtype=dtype, mask=mask, keepdims=keepdims)
    fn.__name__ = fn.__qualname__ = name
    fn.nki_name = _REDUCE[name]
    fn.__doc__ = f"nl.{name}(x, axis, *, dtype, mask, keepdims): reduce free axes (VectorE)."
    return fn


sum = _reduction("sum")  # noqa: A001 - NKI's names
max = _reduction("max")  # noqa: A001
min = _reduction("min")  # noqa: A001
prod = _reduction("prod")
mean = _reduction("mean")
var = _reduction("var")
all = _reduction("all")  # noqa: A001


# ------------------------------------------------------------------------------ PE ops
def matmul(x, y, *, transpose_x=False, mask=None, **kwargs):
    """`x @ y` into PSUM (fp32). Without transpose_x, x [M, K] is first transposed on PE."""
    from .isa import _matmul
    return _matmul(x, y, transposed=transpose_x, api="nl.matmul", mask=mask)


def transpose(x, *, dtype=None, mask=None, **kwargs):
    """2-D transpose on TensorE (each dim at most 128)."""
    from .isa import _transpose
    return _transpose(x, api="nl.transpose", engine=Engine.TENSOR, dtype=dtype, mask=mask)


# ------------------------------------------------------------------------------ selection
def where(condition, x, y, *, dtype=None, mask=None, **kwargs):
    """Element-wise select: condition ? x : y."""
    run = current()
    views = []
    shapes = []
    if isinstance(condition, Predicate):
        shapes.append(condition.shape)
    elif is_tile(condition):
        vc = _o.on_chip(condition, "where", "condition", run)
        views.append(vc)
        shapes.append(vc.shape)
    vx = _o.on_chip(x, "where", "x", run) if is_tile(x) else None
    vy = _o.on_chip(y, "where", "y", run) if is_tile(y) else None
    shapes += [v.shape for v in (vx, vy) if v is not None]
    shape = _o.broadcast_shape(*shapes)
    nd = len(shape)
    d = _o.out_dtype(dtype, *(v if v is not None else s for v, s in ((vx, x), (vy, y))))
    m = _o.mask_for(shape, mask)
    val = None
    if run.compute:
        c = condition.values if isinstance(condition, Predicate) else _o.value(views[0], None, nd)
        a = _o.value(vx, None, nd) if vx is not None else np.float32(x)
        b = _o.value(vy, None, nd) if vy is not None else np.float32(y)
        val = np.where(_o.padded(np.asarray(c), nd).astype(bool), a, b)
    reads = [(v, None) for v in views + [vx, vy] if v is not None]
    return emit_result(run, "tensor_copy_predicated", Engine.VECTOR, reads, val, shape, d,
                       mask=m, producer="nl.where", attrs={"api": "nl.where"})


def broadcast_to(src, shape, **kwargs):
    """A new SBUF tile; a partition broadcast ([1, F] -> [P, F]) is a TensorE matmul."""
    run = current()
    v = _o.on_chip(src, "broadcast_to", "src", run)
    shape = tuple(int(s) for s in shape)
    nd = len(shape)
    val = None
    if run.compute:
        a = _o.padded(v.read(), nd)
        try:
            val = np.broadcast_to(a, shape).copy()
        except ValueError:
            raise SimCompileError(f"cannot broadcast a tile of shape {list(v.shape)} to "
                                  f"{list(shape)}", code="err_shape_mismatch") from None
    else:
        _o.broadcast_shape(v.shape, shape)
    partition = (v.shape[0] if v.shape else 1) != shape[0]
    op, engine = ("broadcast_to", Engine.TENSOR) if partition else ("tensor_copy", Engine.VECTOR)
    return emit_result(run, op, engine, [(v, None)], val, shape, v.dtype, producer="nl.broadcast_to",
                       attrs={"api": "nl.broadcast_to", "partition_broadcast": partition})


def expand_dims(data, axis, **kwargs):
    """Insert a unit axis (only after the last axis, trainium.md §3.5)."""
    run = current()
    v = _o.on_chip(data, "expand_dims", "data", run)
    shape = list(v.shape)
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    for a in sorted(int(a) % (len(shape) + 1) for a in axes):
        shape.insert(a, 1)
    val = v.read()
    return emit_result(run, "view", Engine.NONE, [(v, None)],
                       None if val is None else val.reshape(shape), tuple(shape), v.dtype,
                       producer="nl.expand_dims", attrs={"api": "nl.expand_dims"})


def loop_reduce(x, op, loop_indices, *, dtype=None, mask=None, **kwargs):
    """Reduce `x` across iterations of the listed loops into the assignment target.

    The target is the same tile on every iteration (the real compiler traces the body once): on
    the first iteration it takes `x`, afterwards `op(target, x)`.
    """
    run = current()
    alu = binary_op(op, "loop_reduce")
    v = _o.on_chip(x, "loop_reduce", "x", run)
    idx = list(loop_indices) if isinstance(loop_indices, (list, tuple)) else [loop_indices]
    if not idx or not _b.all(isinstance(i, LoopVar) for i in idx):
        raise SimCompileError("loop_reduce: loop_indices must be the indices of enclosing "
                              "affine_range / sequential_range loops", code="err_loop_reduce_indices")
    depth = _b.min(i.depth for i in idx)
    scope_depth = _b.min(i.scope_depth for i in idx)
    from .runtime import caller
    key = (caller(), run.loops[:depth], run.program_id)
    first = _b.all(i.first for i in idx) or key not in run.loop_reduce
    d = _dt.to_dtype(dtype) if dtype is not None else v.dtype
    m = _o.mask_for(v.shape, mask)
    if first:
        saved_scope = run.scope
        run.scope = run.scope[:scope_depth]
        try:
            acc = allocate(v.shape, d, SBUF, name="loop_reduce")
        finally:
            run.scope = saved_scope
        run.loop_reduce[key] = acc
    acc = run.loop_reduce[key]
    av = as_view(acc)
    run.memory.touch(acc.tid)
    if run.compute:
        new = _o.value(v)
        if not first:
            new = alu.fn(_o.value(av), new)
        av.write(new.astype(d), m)
    acc.written = True
    if run.trace is not None:
        reads = (v.access(m),) if first else (av.access(), v.access(m))
        run.emit("tensor_copy" if first else "tensor_tensor", Engine.VECTOR, reads,
                 (av.access(m),), d.name, v.shape[0], _o.free_size(v.shape),
                 {"op": alu.name, "api": "nl.loop_reduce"})
    return acc


# ------------------------------------------------------------------------------ composites
def softmax(x, axis, *, dtype=None, compute_dtype=None, mask=None, **kwargs):
    """exp(x - max) / sum(exp(x - max)) along free axis `axis` (several instructions)."""
    mx = max(x, axis=axis, keepdims=True, mask=mask)
    e = exp(subtract(x, mx, mask=mask), mask=mask)
    s = sum(e, axis=axis, keepdims=True, mask=mask)
    return multiply(e, reciprocal(s), dtype=dtype, mask=mask)


def rms_norm(x, w, axis, n, epsilon=1e-6, *, dtype=None, compute_dtype=None, mask=None, **kw):
    """x / sqrt(mean(x^2) + eps) * w along free axis `axis`."""
    ss = sum(square(x, mask=mask), axis=axis, keepdims=True, mask=mask)
    r = rsqrt(add(multiply(ss, 1.0 / n), epsilon))
    return multiply(multiply(x, r, mask=mask), w, dtype=dtype, mask=mask)


def device_print(prefix, x, **kwargs) -> None:
    run = current()
    if run.compute and is_tile(x):
        print(prefix, as_view(x).read())
    elif run.compute:
        print(prefix, x)


# Element-wise tables -> module attributes (nl.add, nl.exp, ...).
for _name in BINARY:
    globals()[_name] = _Binary(_name)
for _name in ACTIVATIONS:
    if _name not in ("copy", "identity"):
        globals()[_name] = _Unary(_name)
invert = _Unary("invert")
add, subtract, multiply, divide = (globals()[n] for n in ("add", "subtract", "multiply", "divide"))
exp, square, rsqrt, reciprocal = (globals()[n] for n in ("exp", "square", "rsqrt", "reciprocal"))

OPERATORS.update({n: globals()[n] for n in BINARY})
OPERATORS.update(negative=globals()["negative"], abs=globals()["abs"], invert=invert,
                 broadcast_to=broadcast_to)

_UNSUPPORTED = {
    "dropout": "random dropout has no reproducible CPU semantics here",
    "rand": "", "random_seed": "", "all_reduce": "collectives are not simulated",
    "gather_flattened": "", "shuffle": "", "static_cast": "", "sequence_bounds": "",
    "select_reduce": "",
}


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise SimUnsupportedError(f"nl.{name}", _UNSUPPORTED.get(name, ""))
