"""mamba baseline: per channel tile, states in sequence, each state's scan over sequence chunks."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(delta, u, a, b, c):
    C, M = delta.shape
    S = a.shape[1]
    W = 1024 if M % 1024 == 0 else 512  # sequence chunk: 4 KiB (or 2 KiB) per partition per tile
    assert C % 128 == 0 and M % W == 0, "baseline needs C % 128 == 0 and M % 512 == 0"
    out = nl.ndarray((C, M), dtype=delta.dtype, buffer=nl.shared_hbm)
    for ct in nl.affine_range(C // 128):
        ch = nl.ds(ct * 128, 128)
        acc = nl.zeros((128, M), dtype=delta.dtype, buffer=nl.sbuf)
        for s in nl.sequential_range(S):
            a_s = nl.load(a[ch, s:s + 1])  # [128, 1]: per-partition scale of the exp
            carry = nl.zeros((128, 1), dtype=delta.dtype, buffer=nl.sbuf)  # h at the end of the last chunk
            for j in nl.sequential_range(M // W):
                cols = nl.ds(j * W, W)
                d = nl.load(delta[ch, cols])
                ut = nl.load(u[ch, cols])
                b_s = nl.load(b[s:s + 1, cols]).broadcast_to((128, W))
                c_s = nl.load(c[s:s + 1, cols]).broadcast_to((128, W))
                d_a = nisa.activation(op=nl.exp, data=d, scale=a_s)
                du = nl.multiply(d, ut)
                d_bu = nl.multiply(du, b_s)
                h = nisa.tensor_tensor_scan(d_a, d_bu, initial=carry, op0=nl.multiply, op1=nl.add)
                carry[:, 0:1] = nl.copy(h[:, W - 1:W])
                y = nl.multiply(h, c_s)
                acc[:, cols] = nl.add(acc[:, cols], y)
        nl.store(out[ch, :], value=acc)
    return out
