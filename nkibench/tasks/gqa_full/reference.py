"""NumPy oracle of gqa_full (nkibench.md §3.5): grouped-query attention, no mask, head by head."""
import numpy as np


def forward(q, k, v):
    B, N, QH, D = q.shape
    KH = k.shape[2]
    n_rep = QH // KH
    scale = np.float32(np.sqrt(D))
    out = np.empty((B, QH, N, D), dtype=np.float32)
    for b in range(B):
        for h in range(QH):
            g = h // n_rep
            s = (q[b, :, h, :] @ k[b, :, g, :].T) / scale
            s -= s.max(axis=1, keepdims=True)
            np.exp(s, out=s)
            s /= s.sum(axis=1, keepdims=True)
            out[b, h] = s @ v[b, :, g, :]
    return out
