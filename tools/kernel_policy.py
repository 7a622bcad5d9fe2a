"""Static admission policy for candidate kernels, checked on the AST before anything runs.

A first, cheap layer in front of the OS confinement (tools/confine.py): an NKI kernel needs NKI,
NumPy and a few pure standard modules, never files, processes, reflection or our own packages. A
kernel that reaches for them is rejected with a message the LLM can act on. The policy only
parses; it never executes the code. It is not the security boundary: the confined process is.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from accelopt_graph.tools.backend import parse_python

ALLOWED_IMPORTS = frozenset({"neuronxcc", "nki", "numpy", "math", "functools", "itertools",
                             "typing", "__future__", "collections"})
FORBIDDEN_NAMES = frozenset({"__import__", "eval", "exec", "compile", "open", "globals", "locals",
                             "vars", "getattr", "setattr", "delattr", "breakpoint", "input",
                             "memoryview", "__builtins__", "exit", "quit", "help", "dir", "type",
                             "object", "super", "classmethod", "staticmethod", "property",
                             # reflection by string: attribute lookups the AST check cannot see
                             "attrgetter", "methodcaller", "get_type_hints", "ForwardRef"})
# Attribute names refused on any object (e.g. `functools.partial(...).func` is fine, `typing.get_type_hints` is not).
# `current` (the simulator's run state, which holds the trace) and `np`/`numpy` (a module
# re-exported by nl/nisa, which would dodge the NumPy checks) are refused too.
_FORBIDDEN_ATTRS = frozenset({"attrgetter", "methodcaller", "get_type_hints", "ForwardRef", "eval",
                              "exec", "compile", "open", "getattr", "setattr", "delattr", "globals",
                              "locals", "vars", "current", "np", "numpy"})
_DUNDER = re.compile(r"__\w+__")
# NumPy's file, ctypes and test helpers: a kernel never needs them, a reward hack might.
FORBIDDEN_NUMPY_ATTRS = frozenset({"load", "save", "savez", "savez_compressed", "fromfile",
                                   "tofile", "loadtxt", "savetxt", "genfromtxt", "memmap", "lib",
                                   "ctypeslib", "DataSource", "fromregex", "testing", "f2py",
                                   "distutils", "core", "_core", "random"})


@dataclass(frozen=True)
class PolicyViolation:
    """Why a kernel was refused, with the offending line."""

    line: int
    reason: str

    def message(self) -> str:
        return (f"kernel rejected before running (sandbox policy), line {self.line}: {self.reason}. "
                f"Kernels may import only: {', '.join(sorted(ALLOWED_IMPORTS - {'__future__'}))}.")


def _root(module: str | None) -> str:
    return (module or "").split(".")[0]


def check_kernel_source(code: str) -> PolicyViolation | None:
    """Return the first policy violation in `code`, or None. Unparseable code returns None."""
    try:
        tree = parse_python(code)
    except (SyntaxError, ValueError):
        return None
    numpy_names = {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
                   if isinstance(n, ast.Import) for a in n.names if _root(a.name) == "numpy"}
    for node in ast.walk(tree):
        violation = _check_node(node, numpy_names)
        if violation:
            return violation
    return None


def _numpy_submodule(module: str, line: int) -> PolicyViolation | None:
    parts = module.split(".")
    if parts[0] == "numpy" and len(parts) > 1 and parts[1] in FORBIDDEN_NUMPY_ATTRS:
        return PolicyViolation(line, f"import of {module!r} is not allowed in kernels")
    return None


def _check_node(node: ast.AST, numpy_names: set[str]) -> PolicyViolation | None:
    line = getattr(node, "lineno", 0)
    if isinstance(node, ast.Import):
        for alias in node.names:
            if _root(alias.name) not in ALLOWED_IMPORTS:
                return PolicyViolation(line, f"import of {alias.name!r} is not allowed")
            if (violation := _numpy_submodule(alias.name, line)):
                return violation
    elif isinstance(node, ast.ImportFrom):
        if node.level or _root(node.module) not in ALLOWED_IMPORTS:
            return PolicyViolation(line, f"import from {node.module or '.'!r} is not allowed")
        if (violation := _numpy_submodule(node.module, line)):
            return violation
        if _root(node.module) == "numpy":
            for alias in node.names:
                if alias.name in FORBIDDEN_NUMPY_ATTRS or alias.name == "*":
                    return PolicyViolation(line, f"numpy.{alias.name} is not allowed in kernels")
    elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
        return PolicyViolation(line, f"use of {node.id!r} is not allowed")
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _DUNDER.search(node.value):
        return PolicyViolation(line, "dunder names inside strings are not allowed")
    elif isinstance(node, ast.Attribute):
        if node.attr.startswith("__") and node.attr.endswith("__"):
            return PolicyViolation(line, f"dunder attribute {node.attr!r} is not allowed")
        if node.attr.startswith("_"):
            return PolicyViolation(line, f"private attribute {node.attr!r} is not allowed")
        if node.attr in _FORBIDDEN_ATTRS:
            return PolicyViolation(line, f"attribute {node.attr!r} is not allowed")
        if (isinstance(node.value, ast.Name) and node.value.id in numpy_names
                and node.attr in FORBIDDEN_NUMPY_ATTRS):
            return PolicyViolation(line, f"{node.value.id}.{node.attr} is not allowed in kernels")
    return None
