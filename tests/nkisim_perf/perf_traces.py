"""Builders for hand-made traces: the performance model is tested without the interpreter."""
from __future__ import annotations

import itertools

from accelopt_graph.tools.nkisim.perf_model import itemsize
from accelopt_graph.tools.nkisim.trace import Access, Buffer, Engine, LoopFrame, LoopKind, TraceEvent

_ids = itertools.count(1000)


def new_id() -> int:
    return next(_ids)


def tile(tid: int, shape: tuple[int, ...], *, dtype: str = "float32", buffer: Buffer = Buffer.SBUF,
         offset: tuple[int, ...] | None = None, contiguous_bytes: int = 0,
         inner_stride_bytes: int = 0) -> Access:
    """An access of `shape` (partition dim first) at `offset` of tensor `tid`."""
    offset = offset or (0,) * len(shape)
    free = 1
    for d in shape[1:]:
        free *= d
    nbytes = shape[0] * free * itemsize(dtype)
    region = tuple((o, o + d) for o, d in zip(offset, shape))
    return Access(tensor_id=tid, buffer=buffer, dtype=dtype, nbytes=nbytes, partitions=shape[0],
                  free_elems=free, region=region,
                  contiguous_bytes=contiguous_bytes or (nbytes if buffer is Buffer.HBM else free * itemsize(dtype)),
                  inner_stride_bytes=inner_stride_bytes)


def event(op: str, engine: Engine, reads=(), writes=(), *, dtype: str = "float32", loops=(),
          line: int = 0, **attrs) -> TraceEvent:
    out = writes[0] if writes else reads[0]
    return TraceEvent(op=op, engine=engine, reads=tuple(reads), writes=tuple(writes), dtype=dtype,
                      partitions=out.partitions, free_size=out.free_elems, loops=tuple(loops),
                      line=line, attrs=dict(attrs))


def load(hbm_id: int, sbuf_id: int, shape, *, dtype="float32", hbm_offset=None, loops=(),
         hbm_contiguous: int = 0) -> TraceEvent:
    src = tile(hbm_id, shape, dtype=dtype, buffer=Buffer.HBM, offset=hbm_offset,
               contiguous_bytes=hbm_contiguous)
    dst = tile(sbuf_id, shape, dtype=dtype)
    return event("load", Engine.DMA, [src], [dst], dtype=dtype, loops=loops)


def store(sbuf_id: int, hbm_id: int, shape, *, dtype="float32", hbm_offset=None, loops=()) -> TraceEvent:
    src = tile(sbuf_id, shape, dtype=dtype)
    dst = tile(hbm_id, shape, dtype=dtype, buffer=Buffer.HBM, offset=hbm_offset)
    return event("store", Engine.DMA, [src], [dst], dtype=dtype, loops=loops)


def matmul(stat_id: int, mov_id: int, psum_id: int, *, k=128, m=128, n=512, dtype="float32",
           accumulate=False, loops=(), **attrs) -> TraceEvent:
    reads = [tile(stat_id, (k, m), dtype=dtype), tile(mov_id, (k, n), dtype=dtype)]
    out = tile(psum_id, (m, n), dtype="float32", buffer=Buffer.PSUM)
    if accumulate:
        reads.append(out)
    ev = TraceEvent(op="nc_matmul", engine=Engine.TENSOR, reads=tuple(reads), writes=(out,),
                    dtype=dtype, partitions=k, free_size=n, loops=tuple(loops),
                    attrs={"stationary_free": m, "moving_free": n, **attrs})
    return ev


def affine(loop_id: int, i: int, trips: int) -> LoopFrame:
    return LoopFrame(loop_id, LoopKind.AFFINE, i, trips)


def sequential(loop_id: int, i: int, trips: int) -> LoopFrame:
    return LoopFrame(loop_id, LoopKind.SEQUENTIAL, i, trips)
