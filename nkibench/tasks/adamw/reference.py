"""NumPy oracle of adamw (nkibench.md §3.1): one AdamW step at t = 1, constants folded."""
import numpy as np


def forward(theta: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray) -> np.ndarray:
    f = np.float32
    m_new = f(0.9) * m + f(0.1) * g
    v_new = f(0.999) * v + f(0.001) * g * g
    return (theta - f(1e-5) * theta) - f(0.01) * m_new / (np.sqrt(f(1000) * v_new) + f(1e-8))
