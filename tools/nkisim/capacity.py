"""SBUF / PSUM capacity for data that is live at the same time.

Liveness is approximated from the kernel's own structure (documented in docs/simulator.md):
a tile is live from its allocation until (a) the Python object dies (the kernel dropped every
reference, e.g. a temporary or a rebound name) or (b) the loop iteration that created it ends,
whichever comes first. PSUM tiles occupy whole 2 KiB banks. A tensor with block dims counts one
block: its logical size is the compiler's business (it rotates physical buffers and spills), so it
is only a warning when the logical size alone exceeds the partition (trainium.md §7.5).
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import SimCompileError


@dataclass(frozen=True)
class Capacity:
    sbuf_bytes_per_partition: int
    psum_bytes_per_partition: int
    psum_bank_bytes: int = 2048


# trn1: 24 MiB SBUF = 128 x 192 KiB; PSUM 2 MiB = 128 x 16 KiB in 8 banks (trainium.md §1.1).
# trn2: 28 MiB SBUF = 128 x 224 KiB; same PSUM.
CAPACITY = {"trn1": Capacity(192 * 1024, 16 * 1024), "trn2": Capacity(224 * 1024, 16 * 1024)}


class LiveMemory:
    """Bytes per partition live in SBUF and PSUM; raises when a new tile does not fit."""

    def __init__(self, capacity: Capacity, *, enforce: bool = True) -> None:
        self.capacity = capacity
        self.enforce = enforce
        self.live = {"sbuf": 0, "psum": 0}
        self.peak = {"sbuf": 0, "psum": 0}
        self.owners: dict[int, tuple[str, int]] = {}
        self.warnings: list[str] = []

    def limit(self, space: str) -> int:
        c = self.capacity
        return c.sbuf_bytes_per_partition if space == "sbuf" else c.psum_bytes_per_partition

    def footprint(self, space: str, bytes_per_partition: int) -> int:
        if space == "psum":
            bank = self.capacity.psum_bank_bytes
            return -(-bytes_per_partition // bank) * bank
        return bytes_per_partition

    def allocate(self, tid: int, space: str, bytes_per_partition: int, name: str,
                 logical_bytes: int = 0) -> None:
        need = self.footprint(space, bytes_per_partition)
        limit = self.limit(space)
        if logical_bytes > limit:
            self.warnings.append(
                f"tensor `{name}` declares {logical_bytes} bytes per partition of {space.upper()} "
                f"(limit {limit}); the compiler would spill or rotate its blocks")
        live = self.live[space] + need
        if live > limit and self.enforce:
            raise SimCompileError(
                f"{space.upper()} capacity exceeded while allocating `{name}`: {live} bytes per "
                f"partition live at the same time, limit {limit} (free or reuse tiles, use smaller "
                f"tiles, or allocate inside the loop that uses them)",
                code="err_out_of_memory")
        self.live[space] = live
        self.peak[space] = max(self.peak[space], live)
        self.owners[tid] = (space, need)

    def release(self, tid: int) -> None:
        entry = self.owners.pop(tid, None)
        if entry is not None:
            self.live[entry[0]] -= entry[1]
