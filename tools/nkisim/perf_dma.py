"""DMA transfer costs (trainium.md §2.4): engines per transfer, descriptor sizes, HBM bandwidth."""
from __future__ import annotations

import math
from dataclasses import dataclass

from accelopt_graph.tools.nkisim.hardware import HardwareSpec
from accelopt_graph.tools.nkisim.perf_costs import itemsize_or
from accelopt_graph.tools.nkisim.trace import Access, Buffer, TraceEvent


@dataclass(frozen=True, slots=True)
class DmaCost:
    """A transfer's data-phase times on the busiest DMA engine and on HBM, and its engine count."""

    kind: str  # load | store | sbuf_copy | hbm_copy | spill_save | spill_reload
    nbytes: int
    engines: int
    engine_s: float
    hbm_s: float
    descriptors: int


_TRANSPOSING_DMA = {"load_transpose2d", "dma_transpose"}


def dma_kind(ev: TraceEvent) -> str:
    src = ev.reads[0].buffer if ev.reads else Buffer.HBM
    dst = ev.writes[0].buffer if ev.writes else Buffer.HBM
    if src is Buffer.HBM and dst is Buffer.HBM:
        return "hbm_copy"
    if src is Buffer.HBM:
        return "load"
    if dst is Buffer.HBM:
        return "store"
    return "sbuf_copy"


def dma_transfer_cost(*, nbytes: int, partitions: int, chunk_bytes: int, touches_hbm: bool,
                      spec: HardwareSpec, kind: str, efficiency: float = 1.0) -> DmaCost:
    """Time one transfer: split over ceil(P/8) engines, fragments under 512 B padded, HBM-capped."""
    nbytes = max(0, int(nbytes))
    parts = max(1, min(int(partitions), spec.partitions))
    engines = min(spec.dma_engines, math.ceil(parts / spec.dma_partitions_per_engine))
    chunk = max(1, min(int(chunk_bytes), nbytes) if nbytes else 1)
    descriptors = math.ceil(nbytes / chunk) if nbytes else 0
    # Every descriptor (contiguous fragment) costs at least dma_min_descriptor_bytes of engine time.
    effective = max(nbytes, descriptors * spec.dma_min_descriptor_bytes)
    engine_s = effective / engines / spec.dma_engine_bytes_per_s / max(efficiency, 1e-9)
    hbm_s = nbytes / spec.hbm_bytes_per_s if touches_hbm else 0.0
    return DmaCost(kind, nbytes, engines, engine_s, hbm_s, descriptors)


def _contiguous_run(a: Access) -> int:
    """Longest contiguous byte run of an access.

    When the recorded run is a single element but the access fills its bounding box densely (an
    `nl.arange` tile index is recorded as a gather), the innermost box extent is contiguous.
    """
    run = a.contiguous_bytes or a.nbytes
    elems = a.partitions * a.free_elems
    size = a.nbytes // elems if elems else 0
    if size and run <= size and a.region:
        box = math.prod(hi - lo for lo, hi in a.region)
        if box == elems:
            run = max(run, (a.region[-1][1] - a.region[-1][0]) * size)
    return run


def dma_cost(ev: TraceEvent, spec: HardwareSpec) -> DmaCost:
    """Cost of a DMA event from its HBM and SBUF sides (contiguous run = descriptor size)."""
    if not ev.reads and not ev.writes:
        raise ValueError(f"dma_cost: DMA event {ev.op!r} (line {ev.line}) has no reads or writes")
    accesses = list(ev.reads) + list(ev.writes)
    nbytes = (ev.writes[0].nbytes if ev.writes else ev.reads[0].nbytes)
    onchip = [a for a in accesses if a.buffer is not Buffer.HBM]
    partitions = onchip[0].partitions if onchip else (ev.partitions or spec.partitions)
    chunk = nbytes
    for a in accesses:
        run = _contiguous_run(a)
        if a.buffer is not Buffer.HBM:
            # Every SBUF partition row is at least one buffer of the scatter-gather list (S7).
            run = min(run, max(1, a.nbytes // max(1, a.partitions)))
        chunk = min(chunk, run)
    efficiency = 1.0
    if ev.op in _TRANSPOSING_DMA or ev.attrs.get("transpose"):
        if spec.dma_transpose_efficiency > 0:
            efficiency = spec.dma_transpose_efficiency  # Trn2 DMA transpose (S2)
        else:
            chunk = itemsize_or(ev.dtype, 4)  # element-sized descriptors (S6)
    touches_hbm = any(a.buffer is Buffer.HBM for a in accesses)
    return dma_transfer_cost(nbytes=nbytes, partitions=partitions, chunk_bytes=chunk,
                             touches_hbm=touches_hbm, spec=spec, kind=dma_kind(ev),
                             efficiency=efficiency)


__all__ = ["DmaCost", "dma_cost", "dma_kind", "dma_transfer_cost"]
