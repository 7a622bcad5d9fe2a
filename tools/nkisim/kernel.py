"""Kernel objects: `@nki.jit` / `nki.trace` functions and SPMD launches `kernel[g1, g2]`."""
from __future__ import annotations

import functools
import inspect

from .errors import SimCompileError
from .runtime import active


class Kernel:
    """A decorated NKI kernel. Calling it outside a simulation simulates it (NumPy in, out)."""

    def __init__(self, func, **options) -> None:
        self.func = func
        self.options = options
        functools.update_wrapper(self, func)

    def __getitem__(self, grid) -> "Launch":
        return Launch(self, grid)

    def __call__(self, *args, **kwargs):
        if active() is not None:  # a sub-kernel called from a kernel: just run its body
            return self.func(*args, **kwargs)
        from .interpreter import simulate_kernel
        return simulate_kernel(self, *args, **kwargs)

    @property
    def signature(self) -> inspect.Signature:
        return inspect.signature(self.func)


class Launch:
    """`kernel[grid]`: an SPMD launch over a grid of any rank."""

    def __init__(self, kernel, grid) -> None:
        grid = grid if isinstance(grid, tuple) else (grid,)
        try:
            self.grid = tuple(int(g) for g in grid)
        except TypeError:
            raise SimCompileError(f"SPMD grid must be ints, got {grid!r}",
                                  code="err_invalid_spmd_grid") from None
        if any(g <= 0 for g in self.grid):
            raise SimCompileError(f"SPMD grid sizes must be positive, got {self.grid}",
                                  code="err_invalid_spmd_grid")
        self.kernel = kernel if isinstance(kernel, Kernel) else Kernel(kernel)

    def __call__(self, *args, **kwargs):
        if active() is not None:
            raise SimCompileError("a kernel with an SPMD grid cannot be called from inside a kernel",
                                  code="err_nested_kernel_with_spmd_grid")
        from .interpreter import simulate_kernel
        return simulate_kernel(self, *args, **kwargs)


def jit(func=None, *, mode: str = "auto", **options):
    """`@nki.jit`, `@nki.jit(mode=...)`; also used for nki.trace / baremetal / benchmark."""
    if func is None:
        return lambda f: Kernel(f, mode=mode, **options)
    return Kernel(func, mode=mode, **options)


def unwrap(kernel) -> tuple[object, tuple[int, ...]]:
    """(python function, grid) of anything simulate_kernel accepts."""
    if isinstance(kernel, Launch):
        return kernel.kernel.func, kernel.grid
    if isinstance(kernel, Kernel):
        return kernel.func, ()
    if callable(kernel):
        return kernel, ()
    raise TypeError(f"expected an NKI kernel function, got {type(kernel).__name__}")
