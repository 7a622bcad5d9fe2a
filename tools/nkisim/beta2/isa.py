"""`nki.isa` (Beta 2): every instruction writes its `dst` (first argument) and returns nothing.

Each call runs the legacy instruction and assigns its fresh result into `dst`, which retargets
the instruction's write there (one trace event), with `dst`'s dtype as the output dtype.
"""
from __future__ import annotations

import numpy as np

from .. import isa as _legacy
from ..errors import SimCompileError, SimUnsupportedError
from ..runtime import current
from ..tensors import PSUM, as_view, assign, is_tile
from ..isa import (dge_mode, engine, gpsimd_engine, nc_version, oob_mode,  # noqa: F401
                   reduce_cmd, scalar_engine, tensor_engine, unknown_engine, vector_engine)


def _dst(dst, api: str):
    if not is_tile(dst):
        raise SimCompileError(f"'{api}' needs dst= as its first argument (Beta 2 writes into dst)",
                              code="err_missing_argument")
    return as_view(dst)


def _into(dst, result) -> None:
    assign(as_view(dst), result)


def dma_copy(dst, src, *, mask=None, dst_rmw_op=None, oob_mode=oob_mode.error,
             dge_mode=dge_mode.unknown, **kwargs) -> None:
    _legacy.dma_copy(dst=dst, src=src, mask=mask, dst_rmw_op=dst_rmw_op)


def nc_matmul(dst, stationary, moving, *, accumulate=None, is_stationary_onezero=False,
              is_moving_onezero=False, is_transpose=False, **kwargs) -> None:
    """dst (PSUM) = / += stationary.T @ moving. accumulate=None: the first write to a location
    overwrites, later writes accumulate; True always accumulates; False always overwrites."""
    d = _dst(dst, "nc_matmul")
    run = current()
    written = run.constants.setdefault("beta2_psum_written", set())
    key = (d.tensor.tid, d.sel.spans)
    acc = key in written if accumulate is None else bool(accumulate)
    written.add(key)
    res = _legacy.nc_matmul(stationary, moving, is_transpose=is_transpose,
                            is_stationary_onezero=is_stationary_onezero,
                            is_moving_onezero=is_moving_onezero)
    if d.tensor.space is not PSUM:
        raise SimCompileError("nc_matmul writes PSUM: dst must be allocated with buffer=nl.psum",
                              code="err_unsupported_memory")
    assign(d, res, op="add" if acc else None)


def nc_transpose(dst, data, *, engine=engine.unknown, **kwargs) -> None:
    _into(dst, _legacy.nc_transpose(data, engine=engine, dtype=_dst(dst, "nc_transpose").dtype))


def activation(dst, op, data, *, bias=None, scale=1.0, reduce_op=None, reduce_res=None,
               reduce_cmd=reduce_cmd.idle, **kwargs) -> None:
    _into(dst, _legacy.activation(op, data, bias=bias, scale=scale, reduce_op=reduce_op,
                                  reduce_res=reduce_res, reduce_cmd=reduce_cmd,
                                  dtype=_dst(dst, "activation").dtype))


def activation_reduce(dst, op, data, *, reduce_op, reduce_res, bias=None, scale=1.0,
                      **kwargs) -> None:
    _into(dst, _legacy.activation_reduce(op, data, reduce_op=reduce_op, reduce_res=reduce_res,
                                         bias=bias, scale=scale,
                                         dtype=_dst(dst, "activation_reduce").dtype))


def tensor_tensor(dst, data1, data2, op, *, engine=engine.unknown, **kwargs) -> None:
    _into(dst, _legacy.tensor_tensor(data1, data2, op, engine=engine,
                                     dtype=_dst(dst, "tensor_tensor").dtype))


def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None,
                  reverse1=False, *, engine=engine.unknown, **kwargs) -> None:
    _into(dst, _legacy.tensor_scalar(data, op0, operand0, reverse0, op1, operand1, reverse1,
                                     engine=engine, dtype=_dst(dst, "tensor_scalar").dtype))


def scalar_tensor_tensor(dst, data, op0, operand0, op1, operand1, reverse0=False,
                         reverse1=False, **kwargs) -> None:
    _into(dst, _legacy.scalar_tensor_tensor(data=data, op0=op0, operand0=operand0, op1=op1,
                                            operand1=operand1, reverse0=reverse0,
                                            reverse1=reverse1,
                                            dtype=_dst(dst, "scalar_tensor_tensor").dtype))


def tensor_tensor_scan(dst, data0, data1, initial, op0, op1, reverse0=False, reverse1=False,
                       **kwargs) -> None:
    _into(dst, _legacy.tensor_tensor_scan(data0, data1, initial, op0, op1, reverse0, reverse1,
                                          dtype=_dst(dst, "tensor_tensor_scan").dtype))


def tensor_reduce(dst, op, data, axis, *, negate=False, keepdims=False, **kwargs) -> None:
    _into(dst, _legacy.tensor_reduce(op, data, axis, negate=negate, keepdims=keepdims,
                                     dtype=_dst(dst, "tensor_reduce").dtype))


def tensor_partition_reduce(dst, op, data, **kwargs) -> None:
    _into(dst, _legacy.tensor_partition_reduce(op, data,
                                               dtype=_dst(dst, "tensor_partition_reduce").dtype))


def tensor_copy(dst, src, *, engine=engine.unknown, dtype=None, **kwargs) -> None:
    """`dtype` is accepted (nki-samples pass it) and must match dst (dst is authoritative)."""
    _into(dst, _legacy.tensor_copy(src, engine=engine, dtype=_dst(dst, "tensor_copy").dtype))


def reciprocal(dst, data, **kwargs) -> None:
    _into(dst, _legacy.reciprocal(data, dtype=_dst(dst, "reciprocal").dtype))


def memset(dst, value, *, engine=engine.unknown, **kwargs) -> None:
    d = _dst(dst, "memset")
    _into(dst, _legacy.memset(d.shape, value, d.dtype, engine=engine))


def iota(dst, pattern, offset=0, channel_multiplier=0, **kwargs) -> None:
    """dst[p, i1, i2, ...] = offset + channel_multiplier * p + sum_k step_k * i_k, with
    pattern = [[step_1, num_1], [step_2, num_2], ...] over the free dims (int32 math)."""
    d = _dst(dst, "iota")
    parts = d.shape[0]
    steps = [int(s) for s, _ in pattern]
    nums = [int(n) for _, n in pattern]
    grid = np.full([parts] + nums, int(offset), dtype=np.int64)
    grid += channel_multiplier * np.arange(parts).reshape([parts] + [1] * len(nums))
    for k, (s, n) in enumerate(zip(steps, nums)):
        shape = [1] * (len(nums) + 1)
        shape[k + 1] = n
        grid += s * np.arange(n).reshape(shape)
    from ..indexing import Index
    _into(dst, _legacy.iota(Index(grid.reshape(d.shape)), d.dtype))


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise SimUnsupportedError(f"nki.isa.{name}", "not in the simulator's Beta 2 front end")
