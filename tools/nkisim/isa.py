"""The legacy `neuronxcc.nki.isa` surface (nisa.*): one function per hardware instruction.

Semantics follow the ISA pages summarised in trainium.md §3.6; every function checks the
instruction's operand rules (memory spaces, partition counts, size limits) before computing in fp32
and appends one trace event. Names not defined here raise `SimUnsupportedError`.
"""
from __future__ import annotations

import enum
import math

import numpy as np

from . import dtypes as _dt
from . import operands as _o
from .alu import activation_fn, binary_op
from .errors import SimCompileError, SimUnsupportedError
from .indexing import Index, Predicate
from .runtime import current
from .tensors import PSUM, SBUF, as_view, emit_result, is_tile
from .trace import Engine

MATMUL_MAX_K = 128  # contraction = partitions (trainium.md §3.6)
MATMUL_MAX_STATIONARY_FREE = 128
MATMUL_MAX_MOVING_FREE = 512  # one PSUM bank of fp32
PE_TRANSPOSE_MAX = 128
DVE_TRANSPOSE_MAX = 32
BN_STATS_FMAX = 512


class engine(enum.Enum):
    """`engine=` values (nisa.vector_engine, ...)."""

    unknown = "unknown"
    tensor = "tensor"
    vector = "vector"
    scalar = "scalar"
    gpsimd = "gpsimd"
    sync = "sync"


unknown_engine, tensor_engine, vector_engine = engine.unknown, engine.tensor, engine.vector
scalar_engine, gpsimd_engine, sync_engine = engine.scalar, engine.gpsimd, engine.sync
_ENGINE = {engine.tensor: Engine.TENSOR, engine.vector: Engine.VECTOR,
           engine.scalar: Engine.SCALAR, engine.gpsimd: Engine.GPSIMD, engine.sync: Engine.DMA}


def _engine(value, default: Engine) -> Engine:
    return _ENGINE.get(value, default)


def _pinned(value) -> dict:
    """attrs for an instruction whose engine the kernel chose (the perf model must not move it)."""
    return {"engine_explicit": True} if value in _ENGINE else {}


class reduce_cmd(enum.Enum):
    """ACT accumulator commands for `activation(reduce_cmd=...)`."""

    idle = 0
    reset = 1
    reduce = 2
    reset_reduce = 3


class nc_version(enum.IntEnum):
    gen2 = 2
    gen3 = 3


class oob_mode(enum.Enum):
    error = 0
    skip = 1


class dge_mode(enum.Enum):
    unknown = 0
    none = 1
    swdge = 2
    hwdge = 3


def get_nc_version() -> nc_version:
    return nc_version.gen3 if current().hardware == "trn2" else nc_version.gen2


# ------------------------------------------------------------------------------ TensorE
def _matmul(x, y, *, transposed: bool, api: str, mask=None, strict=False, attrs=None):
    run = current()
    names = ("stationary", "moving") if strict else ("x", "y")
    vx = _o.on_chip(x, api, names[0], run)
    vy = _o.on_chip(y, api, names[1], run)
    if strict:
        _o.in_space(vx, (SBUF,), "nc_matmul", names[0])
        _o.in_space(vy, (SBUF,), "nc_matmul", names[1])
    xs, ys = vx.shape, vy.shape
    if transposed:
        k, m = xs[0], math.prod(xs[1:])
    else:
        m, k = xs[0], math.prod(xs[1:])
    k2, n = ys[0], math.prod(ys[1:])
    if k != k2:
        raise SimCompileError(f"'{api}' contraction sizes differ: {names[0]} has {k}, {names[1]} has"
                              f" {k2} (the contraction dim is the partition dim of both)",
                              code="err_matmul_contraction_mismatch")
    if k > MATMUL_MAX_K or m > MATMUL_MAX_STATIONARY_FREE or n > MATMUL_MAX_MOVING_FREE:
        for what, size, limit in (("contraction (partition) size", k, MATMUL_MAX_K),
                                  (f"{names[0]} free size", m, MATMUL_MAX_STATIONARY_FREE),
                                  (f"{names[1]} free size", n, MATMUL_MAX_MOVING_FREE)):
            if size > limit:
                raise SimCompileError(f"'{api}' {what} {size} exceeds the TensorE limit of "
                                      f"{limit}", code="err_matmul_size_exceed_arch_limit")
    shape = (m,) + tuple(ys[1:]) if len(ys) > 1 else (m,)
    val = None
    if run.compute:
        a = _o.value(vx).astype(np.float32, copy=False)
        a = a.reshape(k, m) if transposed else a.reshape(m, k).T
        b = _o.value(vy).astype(np.float32, copy=False).reshape(k, n)
        val = a.T @ b
        if val.shape != shape:  # a reshape view would make `fresh` copy the result again
            val = val.reshape(shape)
    if not transposed and run.trace is not None:  # nl.matmul inserts a PE transpose of x
        run.emit("nc_transpose", Engine.TENSOR, (vx.access(),), (), _dt.name(vx.dtype), m, k,
                 {"api": api, "implicit": True, "is_transpose": True})
    ev_attrs = {"api": api, "stationary_free": m, "moving_free": n, "contraction": k,
                "accumulate": False, "is_transpose": False}
    ev_attrs.update(attrs or {})
    return emit_result(run, "nc_matmul", Engine.TENSOR, [(vx, None), (vy, None)], val, shape,
                       _dt.float32, mask=_o.mask_for(shape, mask), space=PSUM, producer=api,
                       attrs=ev_attrs, event_dtype=_dt.promote(vx.dtype, vy.dtype))


def nc_matmul(stationary, moving, *, is_stationary_onezero=False, is_moving_onezero=False,
              is_transpose=False, tile_position=(), tile_size=(), mask=None, **kwargs):
    """out[M, N] = stationary[K, M].T @ moving[K, N], fp32 into PSUM."""
    return _matmul(stationary, moving, transposed=True, api="nisa.nc_matmul", mask=mask,
                   strict=True, attrs={"is_transpose": bool(is_transpose),
                                       "is_stationary_onezero": bool(is_stationary_onezero),
                                       "is_moving_onezero": bool(is_moving_onezero)})


def _transpose(x, *, api: str, engine: Engine, dtype=None, mask=None, space=SBUF, attrs=None):
    run = current()
    v = _o.on_chip(x, api, "data", run)
    p, f = v.shape[0], math.prod(v.shape[1:])
    limit = PE_TRANSPOSE_MAX if engine is Engine.TENSOR else DVE_TRANSPOSE_MAX
    if p > limit or f > limit:
        raise SimCompileError(f"'{api}' on {engine.value} transposes at most {limit}x{limit}, got "
                              f"{p}x{f}", code="err_size_of_dimension_exceed_arch_limit")
    if engine is Engine.TENSOR and space is PSUM:
        _o.in_space(v, (SBUF,), api, "data")
    val = v.read()
    if val is not None:
        val = val.reshape(p, f).T
    d = _dt.to_dtype(dtype) if dtype is not None else v.dtype
    return emit_result(run, "nc_transpose", engine, [(v, None)], val, (f, p), d,
                       mask=_o.mask_for((f, p), mask), space=space, producer=api, source=v.tensor,
                       attrs={"api": api, "is_transpose": True, "stationary_free": p,
                              "moving_free": p, "contraction": p, **(attrs or {})})


def nc_transpose(data, *, mask=None, dtype=None, engine=engine.unknown, **kwargs):
    """[P, F] -> [F, P]: PE (<= 128x128, SBUF -> PSUM) or VectorE (<= 32x32)."""
    shape = as_view(data).shape if is_tile(data) else ()
    small = shape and shape[0] <= DVE_TRANSPOSE_MAX and math.prod(shape[1:]) <= DVE_TRANSPOSE_MAX
    eng = _engine(engine, Engine.VECTOR if small and engine is vector_engine else Engine.TENSOR)
    return _transpose(data, api="nisa.nc_transpose", engine=eng, dtype=dtype, mask=mask,
                      space=PSUM if eng is Engine.TENSOR else SBUF, attrs=_pinned(engine))


# ------------------------------------------------------------------------------ ScalarE
def activation(op, data, *, bias=None, scale=1.0, reduce_op=None, reduce_res=None,
               reduce_cmd=reduce_cmd.idle, mask=None, dtype=None, **kwargs):
    """op(data * scale + bias); optional add-reduction over the free axes into `reduce_res`."""
    return _activation(op, data, bias=bias, scale=scale, reduce_op=reduce_op,
                       reduce_res=reduce_res, cmd=reduce_cmd, mask=mask, dtype=dtype,
                       api="nisa.activation")


def activation_reduce(op, data, *, reduce_op=None, reduce_res=None, bias=None, scale=1.0,
                      mask=None, dtype=None, **kwargs):
    """activation + the sum of its output over all free axes written into `reduce_res` [P, 1]."""
    if reduce_res is None:
        raise SimCompileError("activation_reduce needs reduce_res=", code="err_missing_argument")
    return _activation(op, data, bias=bias, scale=scale, reduce_op=reduce_op or np.add,
                       reduce_res=reduce_res, cmd=reduce_cmd.reset_reduce, mask=mask, dtype=dtype,
                       api="nisa.activation_reduce")


def _activation(op, data, *, bias, scale, reduce_op, reduce_res, cmd, mask, dtype, api):
    run = current()
    name, fn = activation_fn(op, api)
    v = _o.on_chip(data, api, "data", run)
    parts = v.shape[0]
    sv, s = _o.vector_operand(scale, api, "scale", run, parts)
    bv, b = (None, None) if bias is None else _o.vector_operand(bias, api, "bias", run, parts)
    d = _dt.to_dtype(dtype) if dtype is not None else v.dtype
    m = _o.mask_for(v.shape, mask)
    nd = len(v.shape)
    val = None
    if run.compute:
        a = _o.value(v).astype(np.float32, copy=False)
        s = s if s is None or np.ndim(s) == 0 else _o.padded(s, nd)
        z = a * s if s is not None and not (np.ndim(s) == 0 and s == 1.0) else a
        if b is not None:
            z = z + (b if np.ndim(b) == 0 else _o.padded(b, nd))
        with np.errstate(all="ignore"):
            val = fn(z)
    extra = ()
    reducing = reduce_res is not None or cmd in (reduce_cmd.reduce, reduce_cmd.reset_reduce)
    if reducing:
        if reduce_op is not None and binary_op(reduce_op, api).name != "add":
            raise SimCompileError(f"'{api}' reduce_op must be add on this NeuronCore (v2)",
                                  code="err_unsupported_alu_op")
        acc = run.act_acc
        if cmd in (reduce_cmd.reset, reduce_cmd.reset_reduce):
            acc[:] = 0.0
        if cmd in (reduce_cmd.reduce, reduce_cmd.reset_reduce) and val is not None:
            vv = val if m is None else np.where(m, val, 0.0)
            acc[:parts, 0] += vv.reshape(parts, -1).sum(axis=1, dtype=np.float32)
        if reduce_res is not None:
            rv = _o.on_chip(reduce_res, api, "reduce_res", run)
            if run.compute:
                rv.write(acc[:parts].astype(rv.dtype))
            rv.tensor.written = True
            if run.trace is not None:
                extra = (rv.access(),)
    reads = [(v, m)] + [(x, None) for x in (sv, bv) if x is not None]
    return emit_result(run, "activation", Engine.SCALAR, reads, val, v.shape, d, mask=m,
                       producer=api, extra_writes=extra,
                       attrs={"api": api, "func": name, "reduce": reducing})


# ------------------------------------------------------------------------------ VectorE
def tensor_tensor(data1, data2, op, *, dtype=None, mask=None, engine=engine.unknown, **kwargs):
    """Element-wise op of two tiles with the same partition count."""
    run = current()
    alu = binary_op(op, "tensor_tensor")
    a = _o.on_chip(data1, "tensor_tensor", "data1", run)
    b = _o.on_chip(data2, "tensor_tensor", "data2", run)
    _o.same_partitions("tensor_tensor", a, b)
    _o.not_both_psum("tensor_tensor", a, b)
    eng = _engine(engine, Engine.GPSIMD if alu.name == "power" else Engine.VECTOR)
    if eng is Engine.GPSIMD:
        _o.no_psum("tensor_tensor", a, b)
    if math.prod(a.shape) != math.prod(b.shape):
        raise SimCompileError(f"'tensor_tensor' operands have different sizes {list(a.shape)} and "
                              f"{list(b.shape)}", code="err_shape_mismatch")
    d = _o.out_dtype(dtype, a, b)
    m = _o.mask_for(a.shape, mask)
    val = None
    if run.compute:
        with np.errstate(all="ignore"):
            val = alu.fn(_o.value(a), _o.value(b).reshape(a.shape))
    return emit_result(run, "tensor_tensor", eng, [(a, m), (b, m)], val, a.shape, d, mask=m,
                       producer="nisa.tensor_tensor", attrs={"op": alu.name, **_pinned(engine)})


def _apply(alu, x, operand, reverse):
    with np.errstate(all="ignore"):
        return alu.fn(operand, x) if reverse else alu.fn(x, operand)


def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False,
                  *, dtype=None, mask=None, engine=engine.unknown, **kwargs):
    """(data op0 operand0) op1 operand1; operands are scalars or [P, 1] vectors."""
    run = current()
    api = "tensor_scalar"
    v = _o.on_chip(data, api, "data", run)
    parts, nd = v.shape[0], len(v.shape)
    alu0 = binary_op(op0, api)
    v0, c0 = _o.vector_operand(operand0, api, "operand0", run, parts)
    alu1 = v1 = c1 = None
    if op1 is not None:
        alu1 = binary_op(op1, api)
        v1, c1 = _o.vector_operand(operand1, api, "operand1", run, parts)
    d = _o.out_dtype(dtype, v)
    m = _o.mask_for(v.shape, mask)
    val = None
    if run.compute:
        pad = lambda c: c if np.ndim(c) == 0 else _o.padded(c, nd)  # noqa: E731
        val = _apply(alu0, _o.value(v), pad(c0), reverse0)
        if alu1 is not None:
            val = _apply(alu1, val, pad(c1), reverse1)
    eng = _engine(engine, Engine.VECTOR)
    reads = [(v, m)] + [(x, None) for x in (v0, v1) if x is not None]
    return emit_result(run, "tensor_scalar", eng, reads, val, v.shape, d, mask=m,
                       producer="nisa.tensor_scalar",
                       attrs={"op0": alu0.name, "op1": alu1.name if alu1 else None,
                              **_pinned(engine)})


def scalar_tensor_tensor(*, data, op0, operand0, op1, operand1, reverse0=False, reverse1=False,
                         dtype=None, mask=None, **kwargs):
    """(data op0 operand0) op1 operand1, where operand1 is a full tile."""
    run = current()
    api = "scalar_tensor_tensor"
    v = _o.on_chip(data, api, "data", run)
    alu0, alu1 = binary_op(op0, api), binary_op(op1, api)
    v0, c0 = _o.vector_operand(operand0, api, "operand0", run, v.shape[0])
    t1 = _o.on_chip(operand1, api, "operand1", run)
    _o.same_partitions(api, v, t1)
    _o.not_both_psum(api, v, t1)
    d = _o.out_dtype(dtype, v, t1)
    m = _o.mask_for(v.shape, mask)
    val = None
    if run.compute:
        c0 = c0 if np.ndim(c0) == 0 else _o.padded(c0, len(v.shape))
        val = _apply(alu1, _apply(alu0, _o.value(v), c0, reverse0),
                     _o.value(t1).reshape(v.shape), reverse1)
    reads = [(v, m), (t1, m)] + ([(v0, None)] if v0 is not None else [])
    return emit_result(run, api, Engine.VECTOR, reads, val, v.shape, d, mask=m,
                       producer=f"nisa.{api}", attrs={"op0": alu0.name, "op1": alu1.name})


def tensor_tensor_scan(data0, data1, initial, op0, op1, reverse0=False, reverse1=False, *,
                       dtype=None, mask=None, **kwargs):
    """Per partition, along the free dim: r[i] = op1(op0(data0[i], r[i-1]), data1[i])."""
    run = current()
    api = "tensor_tensor_scan"
    a = _o.on_chip(data0, api, "data0", run)
    b = _o.on_chip(data1, api, "data1", run)
    _o.same_partitions(api, a, b)
    _o.not_both_psum(api, a, b)
    alu0, alu1 = binary_op(op0, api), binary_op(op1, api)
    parts = a.shape[0]
    vi, init = _o.vector_operand(initial, api, "initial", run, parts)
    d = _o.out_dtype(dtype, a, b)
    m = _o.mask_for(a.shape, mask)
    val = None
    if run.compute:
        x = _o.value(a).astype(np.float32, copy=False).reshape(parts, -1)
        y = _o.value(b).astype(np.float32, copy=False).reshape(parts, -1)
        out = np.empty_like(x)
        prev = np.broadcast_to(np.asarray(init, np.float32).reshape(-1), (parts,)).copy()
        f0 = (lambda u, w: alu0.fn(w, u)) if reverse0 else alu0.fn
        f1 = (lambda u, w: alu1.fn(w, u)) if reverse1 else alu1.fn
        for i in range(x.shape[1]):  # sequential along the free dim, vectorised over partitions
            prev = f1(f0(x[:, i], prev), y[:, i])
            out[:, i] = prev
        val = out.reshape(a.shape)
    reads = [(a, m), (b, m)] + ([(vi, None)] if vi is not None else [])
    return emit_result(run, api, Engine.VECTOR, reads, val, a.shape, d, mask=m,
                       producer=f"nisa.{api}", attrs={"op0": alu0.name, "op1": alu1.name})


def tensor_reduce(op, data, axis, *, dtype=None, mask=None, negate=False, keepdims=False,
                  **kwargs):
    """Reduce trailing free axes of a tile (VectorE)."""
    from .language import reduce
    alu = binary_op(op, "tensor_reduce")
    name = {"add": "sum", "maximum": "max", "minimum": "min", "multiply": "prod",
            "logical_and": "all"}.get(alu.name)
    if name is None:
        raise SimUnsupportedError(f"nisa.tensor_reduce with op {alu.name}")
    return reduce(name, data, axis, dtype=dtype, mask=mask, keepdims=keepdims, negate=negate,
                  api="nisa.tensor_reduce")


def tensor_scalar_reduce(*, data, op0, operand0, reduce_op, reduce_res, reverse0=False,
                         dtype=None, mask=None, **kwargs):
    """data op0 operand0, plus its reduction over all free axes into `reduce_res` [P, 1]."""
    run = current()
    api = "tensor_scalar_reduce"
    out = tensor_scalar(data, op0, operand0, reverse0, dtype=dtype, mask=mask)
    red = binary_op(reduce_op, api)
    if red.reduce is None:
        raise SimCompileError(f"'{api}' reduce_op must be add, multiply, max or min",
                              code="err_unsupported_alu_op")
    rv = _o.on_chip(reduce_res, api, "reduce_res", run)
    if run.compute:
        vals = out.data.reshape(out.shape[0], -1).astype(np.float32)
        rv.write(red.reduce(vals, axis=1).reshape(-1, 1).astype(rv.dtype))
    rv.tensor.written = True
    if run.trace is not None and out.event is not None:
        ev = run.trace[out.event]
        run.trace[out.event] = type(ev)(api, ev.engine, ev.reads, ev.writes + (rv.access(),),
                                        ev.dtype, ev.partitions, ev.free_size, ev.loops, ev.line,
                                        ev.file, {**ev.attrs, "reduce_op": red.name})
    return out


def tensor_partition_reduce(op, data, *, dtype=None, mask=None, **kwargs):
    """Reduce across partitions: [P, ...] -> [1, ...] (GpSimd)."""
    run = current()
    api = "tensor_partition_reduce"
    alu = binary_op(op, api)
    if alu.name not in ("add", "maximum", "bitwise_or", "bitwise_and"):
        raise SimCompileError(f"'{api}' op must be add, maximum, bitwise_or or bitwise_and",
                              code="err_unsupported_alu_op")
    v = _o.on_chip(data, api, "data", run)
    _o.no_psum(api, v)
    shape = (1,) + tuple(v.shape[1:])
    d = _dt.to_dtype(dtype) if dtype is not None else v.dtype
    val = None
    if run.compute:
        val = alu.reduce(_o.value(v), axis=0, keepdims=True)
    return emit_result(run, api, Engine.GPSIMD, [(v, None)], val, shape, d,
                       mask=_o.mask_for(shape, mask), producer=f"nisa.{api}",
                       attrs={"op": alu.name})


def tensor_copy(src, *, dtype=None, mask=None, engine=engine.unknown, **kwargs):
    """Copy a tile (bit-exact when the dtype is unchanged)."""
    run = current()
    v = _o.on_chip(src, "tensor_copy", "src", run)
    eng = _engine(engine, Engine.VECTOR)
    if eng is Engine.GPSIMD:
        _o.no_psum("tensor_copy", v)
    d = _dt.to_dtype(dtype) if dtype is not None else v.dtype
    m = _o.mask_for(v.shape, mask)
    val = v.read()
    if val is not None and d != v.dtype:
        val = val.astype(np.float32)  # casts go through fp32
    return emit_result(run, "tensor_copy", eng, [(v, m)], val, v.shape, d, mask=m,
                       producer="nisa.tensor_copy", source=v.tensor, attrs=_pinned(engine))


def reciprocal(data, *, dtype=None, mask=None, engine=engine.unknown, **kwargs):
    """1 / x on VectorE."""
    run = current()
    v = _o.on_chip(data, "reciprocal", "data", run)
    m = _o.mask_for(v.shape, mask)
    val = None
    if run.compute:
        with np.errstate(all="ignore"):
            val = np.float32(1.0) / _o.value(v)
    d = _dt.to_dtype(dtype) if dtype is not None else v.dtype
    return emit_result(run, "reciprocal", _engine(engine, Engine.VECTOR), [(v, m)], val, v.shape,
                       d, mask=m, producer="nisa.reciprocal", attrs=_pinned(engine))


def memset(shape, value, dtype, *, mask=None, engine=engine.unknown, **kwargs):
    """A new tile filled with `value` (shape[0] is the partition dim)."""
    run = current()
    shape = tuple(int(s) for s in shape)
    d = _dt.to_dtype(dtype)
    m = _o.mask_for(shape, mask)
    val = np.full(shape, value, dtype=d) if run.compute else None
    return emit_result(run, "memset", _engine(engine, Engine.VECTOR), [], val, shape, d, mask=m,
                       producer="nisa.memset", attrs={"value": value, **_pinned(engine)})


def iota(expr, dtype, *, mask=None, **kwargs):
    """Evaluate an affine nl.arange expression into a tile (int32 math, then cast; GpSimd)."""
    run = current()
    if isinstance(expr, (int, np.integer)):
        expr = Index(np.asarray([[int(expr)]]))
    if not isinstance(expr, Index):
        raise SimCompileError("iota expects an affine expression of nl.arange / nl.mgrid",
                              code="err_unsupported_expression_in_iota")
    shape = tuple(expr.shape) if expr.ndim > 1 else (expr.shape[0], 1)
    d = _dt.to_dtype(dtype)
    m = _o.mask_for(shape, mask)
    val = expr.values.astype(np.int32).reshape(shape) if run.compute else None
    return emit_result(run, "iota", Engine.GPSIMD, [], val, shape, d, mask=m,
                       producer="nisa.iota")


def affine_select(pred, on_true_tile, on_false_value, *, dtype=None, mask=None, **kwargs):
    """pred ? on_true_tile : on_false_value, with `pred` an affine predicate (GpSimd)."""
    run = current()
    api = "affine_select"
    if not isinstance(pred, Predicate):
        raise SimCompileError(f"'{api}' pred must be an affine comparison of nl.arange "
                              "expressions (use nl.where for tile predicates)",
                              code="err_unsupported_expression_in_mask")
    v = _o.on_chip(on_true_tile, api, "on_true_tile", run)
    _o.no_psum(api, v)
    d = _dt.to_dtype(dtype) if dtype is not None else v.dtype
    m = _o.mask_for(v.shape, mask)
    val = None
    if run.compute:
        p = np.broadcast_to(_o.padded(pred.values, len(v.shape)), v.shape)
        val = np.where(p, _o.value(v), np.float32(on_false_value))
    return emit_result(run, api, Engine.GPSIMD, [(v, m)], val, v.shape, d, mask=m,
                       producer=f"nisa.{api}")


def bn_stats(data, *, dtype=None, mask=None, **kwargs):
    """Per-partition (count, mean, variance * count) of the free elements, as [P, 6].

    The hardware's exact 6-value layout is not documented; only `bn_aggr(bn_stats(x))` (mean and
    variance) is meaningful, and it is exact here.
    """
    run = current()
    v = _o.on_chip(data, "bn_stats", "data", run)
    f = math.prod(v.shape[1:])
    if f > BN_STATS_FMAX:
        raise SimCompileError(f"'bn_stats' free size {f} exceeds {BN_STATS_FMAX} "
                              "(nl.tile_size.bn_stats_fmax)", code="err_size_of_dimension_exceed_arch_limit")
    shape = (v.shape[0], 6)
    val = None
    if run.compute:
        x = _o.value(v).reshape(v.shape[0], -1).astype(np.float32)
        n = np.full((v.shape[0], 1), f, np.float32)
        mu = x.mean(axis=1, keepdims=True)
        m2 = ((x - mu) ** 2).sum(axis=1, keepdims=True)
        val = np.concatenate([n, mu, m2, n * 0, mu * 0, m2 * 0], axis=1)
    return emit_result(run, "bn_stats", Engine.VECTOR, [(v, None)], val, shape,
                       _dt.to_dtype(dtype) if dtype is not None else _dt.float32,
                       producer="nisa.bn_stats")


def bn_aggr(data, *, dtype=None, mask=None, **kwargs):
    """Combine bn_stats groups [P, 6k] into (mean, variance) [P, 2] (Chan's parallel formula)."""
    run = current()
    v = _o.on_chip(data, "bn_aggr", "data", run)
    shape = (v.shape[0], 2)
    val = None
    if run.compute:
        s = _o.value(v).reshape(v.shape[0], -1, 3).astype(np.float64)
        n, mu, m2 = s[..., 0], s[..., 1], s[..., 2]
        tot = n.sum(axis=1)
        mean = (n * mu).sum(axis=1) / tot
        var = (m2 + n * (mu - mean[:, None]) ** 2).sum(axis=1) / tot
        val = np.stack([mean, var], axis=1).astype(np.float32)
    return emit_result(run, "bn_aggr", Engine.VECTOR, [(v, None)], val, shape,
                       _dt.to_dtype(dtype) if dtype is not None else _dt.float32,
                       producer="nisa.bn_aggr")


def dma_copy(*, dst, src, mask=None, dst_rmw_op=None, oob_mode=oob_mode.error,
             dge_mode=dge_mode.unknown, **kwargs):
    """DMA between HBM and SBUF in any direction (optionally dst = op(dst, src))."""
    run = current()
    if not (is_tile(dst) and is_tile(src)):
        raise SimCompileError("dma_copy needs dst= and src= tensors", code="err_missing_argument")
    d, s = as_view(dst), as_view(src)
    m = _o.mask_for(d.shape, mask)
    from .tensors import fit_shape
    fit_shape(s.shape, d.shape, d.tensor.name)
    if d.tensor.space is PSUM or s.tensor.space is PSUM:
        raise SimCompileError("dma_copy moves data between HBM and SBUF; PSUM is not reachable by "
                              "DMA", code="err_unsupported_memory")
    if d.tensor.space.is_hbm:
        _o.writable_hbm(d, "dma_copy")
    else:
        d.check_scope(run)
    run.memory.touch(d.tensor.tid)
    run.memory.touch(s.tensor.tid)
    if run.compute:
        vals = s.read(m if s.shape == d.shape else None)
        if dst_rmw_op is not None:
            vals = binary_op(dst_rmw_op, "dma_copy").fn(_o.value(d, m), vals.astype(np.float32))
        d.write(np.asarray(vals).astype(d.dtype, copy=False), m)
    d.tensor.written = True
    if run.trace is not None:
        run.emit("dma_copy", Engine.DMA, (s.access(m if s.shape == d.shape else None),),
                 (d.access(m),), _dt.name(d.dtype), d.shape[0] if d.shape else 1,
                 _o.free_size(d.shape), {"api": "nisa.dma_copy"})


def tensor_copy_predicated(*, src, dst, predicate, reverse_pred=False, mask=None, **kwargs):
    """dst[i] = src[i] where predicate[i] is non-zero (zero with reverse_pred); dst in place."""
    run = current()
    api = "tensor_copy_predicated"
    sv = _o.on_chip(src, api, "src", run)
    dv = _o.on_chip(dst, api, "dst", run)
    pv = _o.on_chip(predicate, api, "predicate", run)
    _o.same_partitions(api, sv, dv, pv)
    _o.not_both_psum(api, sv, pv)
    m = _o.mask_for(dv.shape, mask)
    if run.compute:
        p = _o.value(pv).reshape(dv.shape).astype(bool)
        if reverse_pred:
            p = ~p
        new = np.where(p, _o.value(sv).reshape(dv.shape), dv.read())
        dv.write(new.astype(dv.dtype), m)
    dv.tensor.written = True
    if run.trace is not None:
        run.emit(api, Engine.VECTOR, (sv.access(), pv.access(), dv.access(m)), (dv.access(m),),
                 _dt.name(dv.dtype), dv.shape[0], _o.free_size(dv.shape), {})


def max8(*, src, dtype=None, mask=None, **kwargs):
    """The 8 largest values of each partition, in descending order: [P, 8] (VectorE)."""
    run = current()
    v = _o.on_chip(src, "max8", "src", run)
    n = math.prod(v.shape[1:])
    if n < 8:
        raise SimCompileError(f"'max8' needs at least 8 elements per partition, got {n}",
                              code="err_size_of_dimension_exceed_arch_limit")
    shape = (v.shape[0], 8)
    val = None
    if run.compute:
        x = _o.value(v).reshape(v.shape[0], -1)
        val = -np.sort(-x, axis=1)[:, :8]
    return emit_result(run, "max8", Engine.VECTOR, [(v, None)], val, shape,
                       _dt.to_dtype(dtype) if dtype is not None else v.dtype, producer="nisa.max8",
                       mask=_o.mask_for(shape, mask))


def nc_find_index8(*, data, vals, dtype=None, mask=None, **kwargs):
    """Index (along the flattened free dims) of the first occurrence of each of the 8 `vals` of
    each partition in `data`: [P, 8] uint32 (VectorE)."""
    run = current()
    dv = _o.on_chip(data, "nc_find_index8", "data", run)
    vv = _o.on_chip(vals, "nc_find_index8", "vals", run)
    _o.same_partitions("nc_find_index8", dv, vv)
    shape = (dv.shape[0], 8)
    val = None
    if run.compute:
        x = _o.value(dv).reshape(dv.shape[0], -1)
        w = _o.value(vv).reshape(vv.shape[0], -1)[:, :8]
        hit = x[:, None, :] == w[:, :, None]  # [P, 8, F]
        val = np.where(hit.any(axis=2), hit.argmax(axis=2), 0).astype(np.uint32)
    return emit_result(run, "nc_find_index8", Engine.VECTOR, [(dv, None), (vv, None)], val, shape,
                       _dt.to_dtype(dtype) if dtype is not None else _dt.uint32,
                       producer="nisa.nc_find_index8", mask=_o.mask_for(shape, mask))


def nc_match_replace8(*, data, vals, imm, dtype=None, mask=None, **kwargs):
    """`data` with the first occurrence of each of the 8 `vals` of each partition replaced by
    `imm` (VectorE)."""
    run = current()
    dv = _o.on_chip(data, "nc_match_replace8", "data", run)
    vv = _o.on_chip(vals, "nc_match_replace8", "vals", run)
    _o.same_partitions("nc_match_replace8", dv, vv)
    val = None
    if run.compute:
        x = _o.value(dv).reshape(dv.shape[0], -1).copy()
        w = _o.value(vv).reshape(vv.shape[0], -1)[:, :8]
        rows = np.arange(x.shape[0])
        for j in range(w.shape[1]):
            hit = x == w[:, j:j + 1]
            found = hit.any(axis=1)
            x[rows[found], hit.argmax(axis=1)[found]] = imm
        val = x.reshape(dv.shape)
    return emit_result(run, "nc_match_replace8", Engine.VECTOR, [(dv, None), (vv, None)], val,
                       dv.shape, _dt.to_dtype(dtype) if dtype is not None else dv.dtype,
                       producer="nisa.nc_match_replace8", mask=_o.mask_for(dv.shape, mask))


_DMA_TRANSPOSE_AXES = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}


def dma_transpose(src, *, axes=None, dtype=None, mask=None, **kwargs):
    """Transpose through the DMA engine into a new SBUF tile ([1, 0], [2, 1, 0] or [3, 1, 2, 0])."""
    run = current()
    v = as_view(src) if is_tile(src) else None
    if v is None:
        raise SimCompileError("dma_transpose expects a tensor", code="err_unsupported_memory")
    if v.tensor.space is PSUM:
        raise SimCompileError("dma_transpose reads HBM or SBUF, not PSUM",
                              code="err_unsupported_memory")
    nd = len(v.shape)
    perm = tuple(axes) if axes is not None else _DMA_TRANSPOSE_AXES.get(nd)
    if perm is None or perm != _DMA_TRANSPOSE_AXES.get(nd):
        raise SimCompileError(f"dma_transpose supports axes {list(_DMA_TRANSPOSE_AXES.values())}, "
                              f"got {list(perm) if perm else None} for a {nd}-D source",
                              code="err_unsupported_dma_transpose")
    shape = tuple(v.shape[a] for a in perm)
    val = v.read()
    if val is not None:
        val = val.transpose(perm)
    return emit_result(run, "dma_transpose", Engine.DMA, [(v, None)], val, shape,
                       _dt.to_dtype(dtype) if dtype is not None else v.dtype,
                       mask=_o.mask_for(shape, mask), producer="nisa.dma_transpose",
                       source=v.tensor, attrs={"transpose": True})


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise SimUnsupportedError(f"nisa.{name}")


