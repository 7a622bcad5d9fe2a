"""NumPy oracle of transpose_matmul (nkibench.md §3.14): out = lhs_t^T rhs."""
import numpy as np


def forward(lhs_t, rhs):
    return lhs_t.T @ rhs
