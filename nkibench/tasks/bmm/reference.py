"""NumPy oracle of bmm (nkibench.md §3.3)."""
import numpy as np


def forward(lhs, rhs):
    return np.matmul(lhs, rhs)
