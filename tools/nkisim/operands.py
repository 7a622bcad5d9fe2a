"""Checks and conversions shared by the nl.* and nisa.* instructions."""
from __future__ import annotations

import math

import numpy as np

from . import dtypes as dt
from .alu import as_f32
from .errors import SimCompileError
from .indexing import Predicate
from .runtime import Run
from .tensors import PSUM, Tensor, View, as_view, check_partitions, is_tile

SCALARS = (int, float, np.integer, np.floating, bool, np.bool_)


def on_chip(x, api: str, arg: str, run: Run) -> View:
    """An SBUF/PSUM tile operand of a compute instruction."""
    cls = x.__class__
    if cls is View:
        v = x
    elif cls is Tensor:
        v = View(x, None, x.full_selection())
    else:
        raise SimCompileError(f"Expected operand '{arg}' of '{api}' to be a tile, got "
                              f"{type(x).__name__}", code="err_failed_to_infer_tile_from_local_tensor")
    t = v.tensor
    if t.space.is_hbm:
        raise SimCompileError(
            f"Expected operand '{arg}' of '{api}' to be in address space 'sbuf' or 'psum', but got "
            f"a tile in 'hbm' instead (load it into SBUF first with nl.load)",
            code="err_unsupported_memory")
    if t.pdim and _block_dims_sliced(v.sel, t.pdim):
        raise SimCompileError(
            f"Cannot infer a tile from operand '{arg}' of '{api}': index the block dimensions "
            f"of `{t.name}` (left of par_dim) with integers first",
            code="err_failed_to_infer_tile_from_local_tensor")
    shape = v.shape
    if shape and shape[0] > 128:
        check_partitions(shape[0], f"operand '{arg}' of '{api}'")
    if t.scope:
        v.check_scope(run)
    run.memory.touch(t.tid)
    return v


def _block_dims_sliced(sel, pdim: int) -> bool:
    """Whether the key keeps a block dim (left of par_dim) instead of indexing it with an int."""
    if sel.spans is not None:
        for d in range(pdim):
            if sel.spans[d][3]:
                return True
        return False
    return any(isinstance(a, np.ndarray) for a in sel.arrays[:pdim])


def in_space(v: View, spaces: tuple, api: str, arg: str) -> None:
    if v.tensor.space not in spaces:
        names = " or ".join(f"'{s.name}'" for s in spaces)
        raise SimCompileError(f"Expected operand '{arg}' of '{api}' to be in address space {names},"
                              f" but got a tile in '{v.tensor.space.name}' instead",
                              code="err_unsupported_memory")


def hbm(x, api: str, arg: str) -> View:
    if not is_tile(x):
        raise SimCompileError(f"Expected operand '{arg}' of '{api}' to be an HBM tensor, got "
                              f"{type(x).__name__}", code="err_unsupported_memory")
    v = as_view(x)
    if not v.tensor.space.is_hbm:
        raise SimCompileError(f"Expected operand '{arg}' of '{api}' to be in address space 'hbm', "
                              f"but got a tile in '{v.tensor.space.name}' instead",
                              code="err_unsupported_memory")
    return v


def writable_hbm(v: View, api: str) -> None:
    """Kernel parameters are immutable unless annotated nt.mutable_tensor (trainium.md §3.1)."""
    t = v.tensor
    if t.role == "param":
        raise SimCompileError(f"'{api}' writes kernel parameter `{t.name}`, which is immutable; "
                              "annotate it with nt.mutable_tensor (and return it) or write a new "
                              "nl.shared_hbm tensor", code="err_mutate_parameter")


def same_partitions(api: str, *views: View) -> None:
    """nisa instructions need equal partition counts (trainium.md §7.2)."""
    parts = {v.shape[0] if v.shape else 1 for v in views}
    if len(parts) > 1:
        raise SimCompileError(
            f"'{api}' operands span different numbers of partitions {sorted(parts)}; use "
            ".broadcast_to to broadcast along the partition dimension",
            code="err_num_partition_mismatch")


def not_both_psum(api: str, a: View, b: View) -> None:
    if a.tensor.space is PSUM and b.tensor.space is PSUM:
        raise SimCompileError(f"'{api}' cannot read both inputs from PSUM; copy one to SBUF first",
                              code="err_unsupported_memory")


def no_psum(api: str, *views: View) -> None:
    """GpSimd cannot access PSUM (trainium.md §1.2)."""
    for v in views:
        if v.tensor.space is PSUM:
            raise SimCompileError(f"'{api}' runs on GpSimd, which cannot access PSUM; copy "
                                  f"`{v.tensor.name or 'tile'}` to SBUF first",
                                  code="err_unsupported_memory")


def pad_shape(shape: tuple, nd: int) -> tuple:
    """Partition-first broadcasting: a [P] tile acts as [P, 1] (trainium.md §7.1)."""
    return tuple(shape) + (1,) * (nd - len(shape))


def broadcast_shape(*shapes: tuple) -> tuple:
    nd = max(len(s) for s in shapes)
    try:
        return np.broadcast_shapes(*(pad_shape(s, nd) for s in shapes))
    except ValueError:
        raise SimCompileError(f"tile shapes {[tuple(s) for s in shapes]} cannot be broadcast "
                              "together", code="err_shape_mismatch") from None


def padded(a: np.ndarray, nd: int) -> np.ndarray:
    return a.reshape(a.shape + (1,) * (nd - a.ndim)) if a.ndim < nd else a


def value(v: View, mask=None, nd: int = 0):
    """fp32 (or exact int) operand values, padded to `nd` dims; None in trace-only mode."""
    a = v.read(mask)
    if a is None:
        return None
    a = as_f32(a)
    return padded(a, nd) if nd else a


def mask_for(shape: tuple, mask) -> np.ndarray | None:
    if mask is None:
        return None
    m = mask.values if isinstance(mask, Predicate) else np.asarray(mask, dtype=bool)
    nd = max(len(shape), m.ndim)
    try:
        m = np.broadcast_to(padded(m, nd), pad_shape(shape, nd)).reshape(shape)
    except ValueError:
        raise SimCompileError(f"mask of shape {m.shape} does not match tile shape {shape}",
                              code="err_unsupported_mask") from None
    return None if m.all() else m


def vector_operand(x, api: str, arg: str, run: Run, parts: int):
    """A scalar or a [P, 1] per-partition vector operand (tensor_scalar, activation scale/bias)."""
    if isinstance(x, SCALARS):
        return None, np.float32(x) if not isinstance(x, (bool, np.bool_)) else x
    v = on_chip(x, api, arg, run)
    n = math.prod(v.shape[1:]) if len(v.shape) > 1 else 1
    if n != 1 or (v.shape[0] if v.shape else 1) not in (parts, 1):
        raise SimCompileError(f"operand '{arg}' of '{api}' must be a scalar or a [{parts}, 1] "
                              f"vector, got a tile of shape {list(v.shape)}",
                              code="err_activation_scale_scalar_or_vector")
    a = v.read()
    return v, None if a is None else as_f32(a).reshape(-1, 1)


def out_dtype(dtype, *inputs) -> np.dtype:
    if dtype is not None:
        return dt.to_dtype(dtype)
    ins = [dt.scalar_dtype(x) if isinstance(x, SCALARS) else x.dtype for x in inputs]
    return dt.promote(*ins)


def free_size(shape: tuple) -> int:
    return math.prod(shape[1:])

