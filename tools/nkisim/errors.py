"""Errors a kernel author (or an LLM) can act on.

`SimCompileError` is what the Neuron compiler would reject (rule violations; the message follows
the compiler's wording, trainium.md §3.7, and carries its `err_*` code). `SimRuntimeError` is a
fault while running (e.g. an unmasked out-of-bounds access). The evaluation service maps them to
`compile_error` and `runtime_error`.
"""
from __future__ import annotations


class SimError(Exception):
    """Base of every error the simulator raises on behalf of the kernel."""

    def __init__(self, message: str, code: str = "", line: int = 0, file: str = "") -> None:
        self.message = message
        self.code = code
        self.line = line
        self.file = file
        super().__init__(self._render())

    def _render(self) -> str:
        where = f"{self.file}:{self.line}: " if self.line else ""
        tag = f" [{self.code}]" if self.code else ""
        return f"{where}{self.message}{tag}"

    def at(self, file: str, line: int) -> "SimError":
        """Attach the kernel source location (first one wins)."""
        if not self.line:
            self.file, self.line = file, line
            self.args = (self._render(),)
        return self


class SimCompileError(SimError):
    """The real compiler would reject this kernel."""


class SimRuntimeError(SimError):
    """The kernel faults while running (out-of-bounds access, bad launch, ...)."""


class SimUnsupportedError(SimCompileError, AttributeError):
    """An NKI API this simulator does not implement: never a silent wrong answer."""

    def __init__(self, api: str, hint: str = "") -> None:
        msg = f"{api} is not supported by the nkisim CPU simulator"
        super().__init__(msg + (f" ({hint})" if hint else ""), code="nkisim_unsupported_api")
