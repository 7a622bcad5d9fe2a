"""Scoped import hook: `import neuronxcc.nki.language as nl` resolves to the simulator.

`activate()` places facade modules in `sys.modules` for the duration of a `with` block and restores
whatever was there before on exit, so nothing leaks. Front ends are entries of `FRONT_ENDS` over the
same core: the legacy (Beta 1) `neuronxcc.nki` and the Beta 2 `nki` namespace (`beta2/`).
"""
from __future__ import annotations

import importlib.util
import itertools
import os
import sys
import threading
import types
from contextlib import contextmanager

from . import isa, kernel, language, nt
from .errors import SimCompileError, SimUnsupportedError
from .loops import KernelRange
from .tensors import PSUM, SBUF


def _package(name: str, attrs: dict, unsupported_prefix: str) -> types.ModuleType:
    mod = types.ModuleType(name, f"nkisim facade for {name}")
    mod.__path__ = []  # a package, so submodules import
    mod.__dict__.update(attrs)

    def __getattr__(attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise SimUnsupportedError(f"{unsupported_prefix}.{attr}")

    mod.__getattr__ = __getattr__
    return mod


def _identity_decorator(func=None, **kwargs):
    return func if func is not None else (lambda f: f)


def _legacy_front_end() -> dict[str, types.ModuleType]:
    from .interpreter import simulate_kernel
    compiler = _package("neuronxcc.nki.compiler", {
        "sbuf": SBUF, "psum": PSUM,
        "skip_middle_end_transformations": _identity_decorator,
        "enable_stack_allocator": _identity_decorator,
        "force_auto_alloc": _identity_decorator,
    }, "ncc")
    nki = _package("neuronxcc.nki", {
        "jit": kernel.jit, "trace": kernel.jit, "baremetal": kernel.jit, "benchmark": kernel.jit,
        "profile": kernel.jit, "simulate_kernel": simulate_kernel,
        "language": language, "isa": isa, "typing": nt, "compiler": compiler,
    }, "nki")
    root = _package("neuronxcc", {"nki": nki}, "neuronxcc")
    return {"neuronxcc": root, "neuronxcc.nki": nki, "neuronxcc.nki.language": language,
            "neuronxcc.nki.isa": isa, "neuronxcc.nki.typing": nt,
            "neuronxcc.nki.compiler": compiler}


def _beta2_front_end() -> dict[str, types.ModuleType]:
    from .beta2 import isa as isa2
    from .beta2 import language as language2
    from .interpreter import simulate_kernel

    def simulate(kernel):
        """`nki.simulate(kernel)(*args)`: run on the CPU simulator, NumPy in and out."""
        return lambda *args, **kwargs: simulate_kernel(kernel, *args, **kwargs)

    nki = _package("nki", {"jit": kernel.jit, "simulate": simulate, "language": language2,
                           "isa": isa2}, "nki")
    return {"nki": nki, "nki.language": language2, "nki.isa": isa2}


FRONT_ENDS = {"legacy": _legacy_front_end, "beta2": _beta2_front_end}
_lock = threading.RLock()
_cache: dict[str, dict[str, types.ModuleType]] = {}


@contextmanager
def activate(front_end: str = "all"):
    """Within the block, NKI imports resolve to the simulator; afterwards they do not.

    `front_end`: "legacy" (`neuronxcc.nki`), "beta2" (`nki`) or "all" (both; their module
    names do not overlap)."""
    names = list(FRONT_ENDS) if front_end == "all" else [front_end]
    with _lock:
        modules = {}
        for fe in names:
            if fe not in _cache:
                _cache[fe] = FRONT_ENDS[fe]()
            modules.update(_cache[fe])
        saved = {name: sys.modules.get(name) for name in modules}
        sys.modules.update(modules)
    try:
        yield
    finally:
        with _lock:
            for name, prev in saved.items():
                if prev is None:
                    sys.modules.pop(name, None)
                else:
                    sys.modules[name] = prev


_counter = itertools.count()


def load_module(path, name: str | None = None, front_end: str = "all") -> types.ModuleType:
    """Import an unmodified kernel file with NKI imports resolving to the simulator."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"kernel file not found: {path}")
    modname = name or f"nkisim_kernel_{next(_counter)}_{os.path.splitext(os.path.basename(path))[0]}"
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    module.range = KernelRange  # plain `range` loops in kernels are sequential loops
    with activate(front_end):
        sys.modules[modname] = module
        try:
            spec.loader.exec_module(module)
        except SyntaxError as exc:
            raise SimCompileError(f"syntax error in kernel file: {exc.msg}", code="err_syntax",
                                  line=exc.lineno or 0, file=path) from exc
        finally:
            sys.modules.pop(modname, None)
    return module


def load_source(source: str, name: str = "kernel_source", front_end: str = "all"):
    """Import kernel code given as a string (the code stays in this process: trusted input only)."""
    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    module.range = KernelRange
    with activate(front_end):
        try:
            code = compile(source, module.__file__, "exec")
        except SyntaxError as exc:
            raise SimCompileError(f"syntax error in kernel source: {exc.msg}", code="err_syntax",
                                  line=exc.lineno or 0, file=module.__file__) from exc
        exec(code, module.__dict__)
    return module
