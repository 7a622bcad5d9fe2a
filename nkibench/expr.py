"""Integer arithmetic over task parameters ("M*K", "4*(M*N + K)", "M//128").

Task files state shapes and peak work as formulas of their parameters so that reduced sizes for
tests re-derive everything. Formulas are parsed with `ast` and only + - * // ** and parentheses
over integer literals and parameter names are accepted, never arbitrary Python.
"""
from __future__ import annotations

import ast
import operator
from typing import Callable, Mapping

from accelopt_graph.tools.backend import parse_python

_BINOPS: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
    ast.Mod: operator.mod,
}


class ExprError(ValueError):
    """A formula that is not integer arithmetic over known parameters."""


def evaluate(formula: str | int, params: Mapping[str, int]) -> int:
    """Evaluate an integer formula such as "4*(M*K + K*N)" with `params` bound."""
    if isinstance(formula, bool):
        raise ExprError(f"boolean {formula!r} is not an integer formula")
    if isinstance(formula, int):
        return formula
    try:
        tree = parse_python(str(formula), mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"cannot parse formula {formula!r}: {exc.msg}") from None
    return _eval(tree.body, params, str(formula))


def names(formula: str | int) -> set[str]:
    """Return the parameter names a formula uses."""
    if isinstance(formula, int):
        return set()
    try:
        tree = parse_python(str(formula), mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"cannot parse formula {formula!r}: {exc.msg}") from None
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def _eval(node: ast.AST, params: Mapping[str, int], text: str) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in params:
            raise ExprError(f"unknown parameter {node.id!r} in formula {text!r} (known: {sorted(params)})")
        return int(params[node.id])
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _eval(node.left, params, text), _eval(node.right, params, text)
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and right == 0:
            raise ExprError(f"division by zero in formula {text!r}")
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, params, text)
    raise ExprError(f"unsupported syntax {ast.dump(node)[:60]} in formula {text!r}: "
                    "only integers, parameter names, + - * // % ** and parentheses")
