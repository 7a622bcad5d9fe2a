"""Selective scan (NKI fused-mamba tutorial style) with tensor_tensor_scan along the sequence.

delta, u: [C, L]; A: [C, S]; B, C_: [S, L]. Per channel c and state s:
  h[t] = exp(delta[c,t] * A[c,s]) * h[t-1] + delta[c,t] * u[c,t] * B[s,t]
  y[c,t] = sum_s C_[s,t] * h[t]
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def mamba_scan_kernel(delta, u, A, B, C):
    channels, seq_len = delta.shape
    n_state = A.shape[1]
    out = nl.ndarray((channels, seq_len), dtype=delta.dtype, buffer=nl.shared_hbm)
    seq_tile = 256
    for ct in nl.affine_range(channels // 128):
        ch = nl.ds(ct * 128, 128)
        delta_i = nl.load(delta[ch, :])
        u_i = nl.load(u[ch, :])
        A_i = nl.load(A[ch, :])
        du = nl.multiply(delta_i, u_i)
        y_acc = nl.zeros((128, seq_len), dtype=nl.float32)
        for s in nl.sequential_range(n_state):
            B_s = nl.load(B[s:s + 1, :]).broadcast_to((128, seq_len))
            C_s = nl.load(C[s:s + 1, :]).broadcast_to((128, seq_len))
            dA = nisa.activation(op=nl.exp, data=delta_i, scale=A_i[:, s])
            dBu = nl.multiply(du, B_s)
            h = nl.ndarray((128, seq_len), dtype=nl.float32)
            for t in nl.sequential_range(seq_len // seq_tile):
                sl = nl.ds(t * seq_tile, seq_tile)
                init = 0.0 if t == 0 else h[:, t * seq_tile - 1]
                h[:, sl] = nisa.tensor_tensor_scan(dA[:, sl], dBu[:, sl], initial=init,
                                                   op0=nl.multiply, op1=nl.add)
            y_acc[...] = nl.add(y_acc, nl.multiply(h, C_s))
        nl.store(out[ch, :], value=y_acc)
    return out
