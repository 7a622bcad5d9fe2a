"""NumPy oracle of rope_single_freq_apply (nkibench.md §3.11): rotate-half convention."""
import numpy as np


def forward(x, freqs_cos, freqs_sin):
    half = x.shape[0] // 2
    x0, x1 = x[:half], x[half:]
    return np.concatenate([x0 * freqs_cos - x1 * freqs_sin, x0 * freqs_sin + x1 * freqs_cos], axis=0)
