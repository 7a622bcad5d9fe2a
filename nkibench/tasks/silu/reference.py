"""NumPy oracle of silu (nkibench.md §3.12)."""
import numpy as np


def forward(x: np.ndarray) -> np.ndarray:
    return x / (np.float32(1) + np.exp(-x))
