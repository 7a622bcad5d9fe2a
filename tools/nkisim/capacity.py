"""SBUF / PSUM capacity for data that is live at the same time.

Liveness is approximated the way a compiler's allocator sees it (docs/simulator.md): a tile is live
from its allocation to its last use (the last instruction that reads or writes it). Each loop
iteration's tiles are distinct tensors, so they do not overlap across iterations. PSUM tiles occupy
whole 2 KiB banks. A tensor with block dims counts one block: the compiler rotates physical buffers
behind block dims and spills, so a logical size over the partition is only a warning
(trainium.md §7.5). The check runs when the kernel finishes, from the recorded intervals.
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
    """Allocation intervals of on-chip tiles; `check()` finds the peak and enforces capacity."""

    def __init__(self, capacity: Capacity, *, enforce: bool = True) -> None:
        self.capacity = capacity
        self.enforce = enforce
        self.clock = 0
        self.tiles: dict[int, tuple] = {}  # tid -> (space, bytes per partition, start, label, site)
        self.last: dict[int, int] = {}
        self.warnings: list[str] = []
        self.peak = {"sbuf": 0, "psum": 0}

    def limit(self, space: str) -> int:
        c = self.capacity
        return c.sbuf_bytes_per_partition if space == "sbuf" else c.psum_bytes_per_partition

    def allocate(self, tid: int, space: str, bytes_per_partition: int, label: str, site=("", 0),
                 logical_bytes: int = 0) -> None:
        if space == "psum":
            bank = self.capacity.psum_bank_bytes
            bytes_per_partition = -(-bytes_per_partition // bank) * bank
        if logical_bytes and logical_bytes > (limit := self.limit(space)):  # 0 for instruction results
            self.warnings.append(
                f"{site[0]}:{site[1]}: tensor `{label}` declares {logical_bytes} bytes per partition "
                f"of {space.upper()} (limit {limit}); the compiler would rotate or spill its blocks")
        self.tiles[tid] = (space, bytes_per_partition, self.clock, label, site)
        self.last[tid] = self.clock
        self.clock += 1

    def forget(self, tid: int) -> None:
        """A fresh result retargeted into its destination never occupied memory of its own."""
        if self.tiles.pop(tid, None) is not None:
            del self.last[tid]

    def touch(self, tid: int) -> None:
        if tid in self.last:
            self.last[tid] = self.clock
            self.clock += 1

    def check(self) -> None:
        """Compute peak live bytes per space; raise if over capacity (when enforcing)."""
        for space in ("psum", "sbuf"):
            events = []
            for tid, (sp, nbytes, start, _, _) in self.tiles.items():
                if sp == space:
                    events.append((start, nbytes, tid))
                    events.append((self.last[tid] + 0.5, -nbytes, tid))
            events.sort(key=lambda e: e[0])
            live, peak, at = 0, 0, 0.0
            for t, delta, _ in events:
                live += delta
                if live > peak:
                    peak, at = live, t
            self.peak[space] = peak
            limit = self.limit(space)
            if peak > limit and self.enforce:
                raise SimCompileError(self._message(space, peak, at, limit), code="err_out_of_memory")

    def _message(self, space: str, peak: int, at: float, limit: int) -> str:
        live = [(v[1], v[3], v[4]) for tid, v in self.tiles.items()
                if v[0] == space and v[2] <= at <= self.last[tid] + 0.5]
        live.sort(key=lambda x: -x[0])
        top = ", ".join(f"`{name}` ({n} B, line {site[1]})" for n, name, site in live[:6])
        line = max((site[1] for _, _, site in live), default=0)
        return (f"{space.upper()} capacity exceeded: {peak} bytes per partition live at the same "
                f"time (limit {limit}) around line {line}; largest live tiles: {top}. Shorten tile "
                "lifetimes (load closer to use, reuse buffers) or use smaller tiles")
