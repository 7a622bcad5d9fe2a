"""`nki.language` (Beta 2): the legacy nl.* core minus what Beta 2 removed (arange / mgrid indexing,
`par_dim`, masks are still accepted where the legacy function takes them)."""
from __future__ import annotations

from .. import language as _legacy
from ..errors import SimUnsupportedError

_REMOVED = {"arange", "mgrid", "par_dim", "loop_reduce", "program_ndim", "nc", "spmd_dim"}
_NAMES = [n for n in dir(_legacy) if not n.startswith("_") and n not in _REMOVED]
globals().update({n: getattr(_legacy, n) for n in _NAMES})


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    hint = "removed in Beta 2" if name in _REMOVED else ""
    raise SimUnsupportedError(f"nki.language.{name}", hint)
