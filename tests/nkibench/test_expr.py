"""Shape and work formulas are integer arithmetic over parameters, never arbitrary Python."""
import pytest

from accelopt_graph.nkibench.expr import ExprError, evaluate, names


def test_arithmetic_over_parameters():
    p = {"M": 4096, "K": 64, "N": 10944}
    assert evaluate("4*(M*N + N*K + M*K)", p) == 4 * (4096 * 10944 + 10944 * 64 + 4096 * 64)
    assert evaluate("N // 512 - N % 512 + 2**3", p) == 10944 // 512 - 10944 % 512 + 8
    assert evaluate(7, p) == 7
    assert names("B*H*N // 128") == {"B", "H", "N"}


@pytest.mark.parametrize("formula, message", [
    ("M * Q", "unknown parameter 'Q'"),
    ("__import__('os').system('true')", "unsupported syntax"),
    ("M / 2", "unsupported syntax"),
    ("M // 0", "division by zero"),
    ("M *", "cannot parse"),
])
def test_bad_formulas_are_rejected_with_the_reason(formula, message):
    with pytest.raises(ExprError, match=message):
        evaluate(formula, {"M": 8})
