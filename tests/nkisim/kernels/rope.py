"""Rotary embedding with head_dim on partitions; the two halves are re-based to partition 0.

x: [D, S] (D = head dim <= 128 on partitions), cos, sin: [D // 2, S].
out[:D/2] = x1 * cos - x2 * sin; out[D/2:] = x2 * cos + x1 * sin.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def rope_kernel(x, cos, sin):
    D, S = x.shape
    half = D // 2
    out = nl.ndarray((D, S), dtype=x.dtype, buffer=nl.shared_hbm)
    i_h = nl.arange(half)[:, None]
    i_s = nl.arange(S)[None, :]
    x1 = nl.load(x[i_h, i_s])  # partitions 0..half-1
    x2 = nl.load(x[half + i_h, i_s])  # re-based: rows half..D-1 land on partitions 0..half-1
    c = nl.load(cos[i_h, i_s])
    s = nl.load(sin[i_h, i_s])
    lo = nl.subtract(nl.multiply(x1, c), nl.multiply(x2, s))
    hi = nl.add(nl.multiply(x2, c), nl.multiply(x1, s))
    nl.store(out[i_h, i_s], value=lo)
    nl.store(out[half + i_h, i_s], value=hi)
    return out
