"""NumPy oracle of swiglu (nkibench.md §3.13); the gate weight comes last in the argument list."""
import numpy as np


def forward(x, w_up, w_down, w_gate):
    g = x @ w_gate
    u = x @ w_up
    return ((g / (np.float32(1) + np.exp(-g))) * u) @ w_down
