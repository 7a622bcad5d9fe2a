"""NumPy oracle of lora (nkibench.md §3.6): out = x w + (x a) b, no alpha/R scaling."""
import numpy as np


def forward(x, w, a, b):
    return x @ w + (x @ a) @ b
