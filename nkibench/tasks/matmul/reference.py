"""NumPy oracle of matmul (nkibench.md §3.8)."""
import numpy as np


def forward(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    return np.matmul(lhs, rhs)
