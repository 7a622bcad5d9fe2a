"""The instruction trace: the contract between the functional simulator and the performance model.

The interpreter appends one `TraceEvent` per NKI instruction it executes (or would execute, in
trace-only mode). `perf_model.estimate_latency(trace, spec)` is a pure function of this list, so
the cost model is testable on hand-made traces without running a kernel.
Fields may be added (with defaults); existing fields keep their meaning.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Engine(str, Enum):
    """Where an instruction runs. Names follow the profiler (tensor, vector, scalar, gpsimd, sync)."""

    TENSOR = "tensor"  # PE: nc_matmul, nc_transpose (PE path)
    VECTOR = "vector"  # DVE
    SCALAR = "scalar"  # ACT
    GPSIMD = "gpsimd"  # Pool
    DMA = "dma"  # load/store/dma_copy between HBM and SBUF (queue chosen by the model)
    NONE = "none"  # bookkeeping with no hardware cost (allocation, views)


class Buffer(str, Enum):
    HBM = "hbm"
    SBUF = "sbuf"
    PSUM = "psum"


class LoopKind(str, Enum):
    AFFINE = "affine"  # iterations independent: may overlap
    SEQUENTIAL = "sequential"  # carried dependency: may not overlap
    STATIC = "static"  # fully unrolled Python-level loop


@dataclass(frozen=True, slots=True)
class LoopFrame:
    """One enclosing loop of an instruction: which loop (static id) and which iteration."""

    loop_id: int
    kind: LoopKind
    iteration: int
    trip_count: int


@dataclass(frozen=True, slots=True)
class Access:
    """One tile region read or written by an instruction.

    `region` is a per-dimension (start, stop) bounding box in the tensor's own index space; it is
    what dependency tracking intersects. `contiguous_bytes` is the length of the longest run of
    consecutive bytes in the access (DMA efficiency depends on it).
    """

    tensor_id: int
    buffer: Buffer
    dtype: str
    nbytes: int
    partitions: int
    free_elems: int  # elements per partition
    region: tuple[tuple[int, int], ...] = ()
    contiguous_bytes: int = 0
    name: str = ""  # the kernel's variable name when known
    # Stride in bytes of the innermost free dim (SBUF/PSUM). 0 = unknown or contiguous. On trn1 a
    # stride over 16 B halves the port bandwidth (trainium.md §1.3), so the perf model reads it.
    inner_stride_bytes: int = 0


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One executed NKI instruction."""

    op: str  # NKI name: "load", "store", "nc_matmul", "activation", "tensor_tensor", ...
    engine: Engine
    reads: tuple[Access, ...]
    writes: tuple[Access, ...]
    dtype: str  # compute dtype
    partitions: int  # partition extent of the instruction's tile
    free_size: int  # elements per partition processed (N in the ISA cost formulas)
    loops: tuple[LoopFrame, ...] = ()  # outermost first
    line: int = 0  # source line in the kernel file
    file: str = ""
    attrs: dict[str, Any] = field(default_factory=dict)  # op-specific: is_transpose, moving/stationary
    # free sizes for matmul, accumulate flag, number of operands, activation function, ...


def _fast_frozen_init(cls) -> None:
    """Replace the `__init__` of a frozen slots dataclass by one that stores each field through
    its slot descriptor. The generated one calls `object.__setattr__(self, name, value)` per
    field (~0.1 us each); the interpreter builds one TraceEvent and ~2 Accesses per instruction.
    Same signature, defaults, values and immutability (assignment still raises)."""
    from dataclasses import MISSING, fields
    params, body, ns = [], [], {}
    for f in fields(cls):
        ns[f"_set_{f.name}"] = cls.__dict__[f.name].__set__
        if f.default is not MISSING:
            ns[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
            body.append(f"    _set_{f.name}(self, {f.name})")
        elif f.default_factory is not MISSING:
            ns[f"_factory_{f.name}"], ns["_UNSET"] = f.default_factory, MISSING
            params.append(f"{f.name}=_UNSET")
            body.append(f"    _set_{f.name}(self, _factory_{f.name}() if {f.name} is _UNSET "
                        f"else {f.name})")
        else:
            params.append(f.name)
            body.append(f"    _set_{f.name}(self, {f.name})")
    exec(f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body), ns)
    init = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init


for _cls in (LoopFrame, Access, TraceEvent):
    _fast_frozen_init(_cls)
del _cls
