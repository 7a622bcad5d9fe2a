"""NumPy oracle of bmm_softmax (nkibench.md §3.4), computed batch by batch to bound memory."""
import numpy as np


def forward(lhs, rhs):
    out = np.empty((lhs.shape[0], lhs.shape[1], rhs.shape[2]), dtype=np.float32)
    for b in range(lhs.shape[0]):
        x = lhs[b] @ rhs[b]
        x -= x.max(axis=1, keepdims=True)
        np.exp(x, out=x)
        x /= x.sum(axis=1, keepdims=True)
        out[b] = x
    return out
