"""Tables of NKI operators: ALU binary ops and ACT activation functions.

A kernel may name an operator as `nl.add`, `np.add`, `nl.exp`, `np.exp`, `np.max` (for
reductions) ...; `binary_op` / `activation_fn` / `reduce_op` map every spelling to one entry. All
arithmetic is done in fp32 (engines compute in fp32, trainium.md §3.2).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .errors import SimCompileError, SimUnsupportedError

try:  # erf: SciPy when present, else Abramowitz-Stegun 7.1.26 (abs. error < 1.5e-7)
    from scipy.special import erf as _erf
except ImportError:  # pragma: no cover - depends on the environment
    def _erf(x):
        s = np.sign(x)
        a = np.abs(x)
        t = 1.0 / (1.0 + 0.3275911 * a)
        y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
                   + 0.254829592) * t * np.exp(-a * a)
        return s * y


@dataclass(frozen=True)
class BinaryOp:
    name: str
    fn: Callable
    kind: str = "arith"  # arith | compare | logical | bitwise
    reduce: Callable | None = None  # NumPy reduction for tensor_reduce / loop_reduce


BINARY = {op.name: op for op in [
    BinaryOp("add", np.add, reduce=np.sum),
    BinaryOp("subtract", np.subtract),
    BinaryOp("multiply", np.multiply, reduce=np.prod),
    BinaryOp("divide", np.divide),
    BinaryOp("power", np.power),
    BinaryOp("maximum", np.maximum, reduce=np.max),
    BinaryOp("minimum", np.minimum, reduce=np.min),
    BinaryOp("fmod", np.fmod),
    BinaryOp("mod", np.mod),
    BinaryOp("equal", np.equal, "compare"),
    BinaryOp("not_equal", np.not_equal, "compare"),
    BinaryOp("greater", np.greater, "compare"),
    BinaryOp("greater_equal", np.greater_equal, "compare"),
    BinaryOp("less", np.less, "compare"),
    BinaryOp("less_equal", np.less_equal, "compare"),
    BinaryOp("logical_and", np.logical_and, "logical", reduce=np.all),
    BinaryOp("logical_or", np.logical_or, "logical", reduce=np.any),
    BinaryOp("logical_xor", np.logical_xor, "logical"),
    BinaryOp("bitwise_and", np.bitwise_and, "bitwise", reduce=np.bitwise_and.reduce),
    BinaryOp("bitwise_or", np.bitwise_or, "bitwise", reduce=np.bitwise_or.reduce),
    BinaryOp("bitwise_xor", np.bitwise_xor, "bitwise"),
    BinaryOp("left_shift", np.left_shift, "bitwise"),
    BinaryOp("right_shift", np.right_shift, "bitwise"),
]}

# NumPy spellings kernels use for the same operators (np.max for a max-reduction, ...).
_NUMPY_ALIASES = {
    np.add: "add", np.subtract: "subtract", np.multiply: "multiply", np.divide: "divide",
    np.true_divide: "divide", np.power: "power", np.maximum: "maximum", np.minimum: "minimum",
    np.max: "maximum", np.min: "minimum", np.amax: "maximum", np.amin: "minimum",
    np.sum: "add", np.prod: "multiply", np.fmod: "fmod", np.mod: "mod", np.equal: "equal",
    np.not_equal: "not_equal", np.greater: "greater", np.greater_equal: "greater_equal",
    np.less: "less", np.less_equal: "less_equal", np.logical_and: "logical_and",
    np.logical_or: "logical_or", np.logical_xor: "logical_xor", np.bitwise_and: "bitwise_and",
    np.bitwise_or: "bitwise_or", np.bitwise_xor: "bitwise_xor", np.left_shift: "left_shift",
    np.right_shift: "right_shift",
}


def _gelu(x):
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(0.0, x)


ACTIVATIONS: dict[str, Callable] = {
    "copy": lambda x: x,
    "identity": lambda x: x,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "reciprocal": lambda x: 1.0 / x,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "tanh": np.tanh,
    "arctan": np.arctan,
    "abs": np.abs,
    "negative": np.negative,
    "sign": np.sign,
    "trunc": np.trunc,
    "floor": np.floor,
    "ceil": np.ceil,
    "square": np.square,
    "erf": _erf,
    "erf_dx": lambda x: 2.0 / np.sqrt(np.pi) * np.exp(-x * x),
    "relu": lambda x: np.maximum(x, 0.0),
    "sigmoid": _sigmoid,
    "gelu": _gelu,
    "gelu_dx": lambda x: 0.5 * (1.0 + _erf(x / np.sqrt(2.0)))
    + x * np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi),
    "gelu_apprx_tanh": _gelu_tanh,
    "gelu_apprx_sigmoid": lambda x: x * _sigmoid(1.702 * x),
    "silu": lambda x: x * _sigmoid(x),
    "silu_dx": lambda x: _sigmoid(x) * (1.0 + x * (1.0 - _sigmoid(x))),
    "softplus": _softplus,
    "mish": lambda x: x * np.tanh(_softplus(x)),
    "logical_not": lambda x: np.logical_not(x),
}

_NUMPY_ACT_ALIASES = {
    np.exp: "exp", np.log: "log", np.sqrt: "sqrt", np.sin: "sin", np.cos: "cos", np.tan: "tan",
    np.tanh: "tanh", np.arctan: "arctan", np.abs: "abs", np.absolute: "abs",
    np.negative: "negative", np.sign: "sign", np.trunc: "trunc", np.floor: "floor",
    np.ceil: "ceil", np.square: "square", np.reciprocal: "reciprocal", np.copy: "copy",
}


def binary_op(op, api: str = "op") -> BinaryOp:
    """The ALU entry for `op` (nl.add, np.add, np.max, 'add', ...)."""
    name = getattr(op, "nki_name", None)
    if name is None:
        try:
            name = _NUMPY_ALIASES.get(op, op if isinstance(op, str) else None)
        except TypeError:
            name = None
    if name in BINARY:
        return BINARY[name]
    raise SimCompileError(f"{api}: unsupported ALU operator {getattr(op, '__name__', op)!r}; "
                          f"use one of nl.{', nl.'.join(BINARY)}", code="err_unsupported_alu_op")


def activation_fn(op, api: str = "activation") -> tuple[str, Callable]:
    """The ACT function for `op` (nl.exp, np.exp, nl.copy, 'gelu', ...)."""
    name = getattr(op, "nki_name", None)
    if name is None:
        try:
            name = _NUMPY_ACT_ALIASES.get(op, op if isinstance(op, str) else None)
        except TypeError:
            name = None
    if name in ACTIVATIONS:
        return name, ACTIVATIONS[name]
    raise SimUnsupportedError(f"{api} function {getattr(op, '__name__', op)!r}",
                              f"supported: {', '.join(sorted(ACTIVATIONS))}")


def as_f32(a: np.ndarray) -> np.ndarray:
    """Engines compute in fp32 (ints keep their exact values when they fit)."""
    if a.dtype == np.float32:
        return a
    if a.dtype.kind in "iub":
        return a
    return a.astype(np.float32)
