"""RMSNorm (NKI rmsnorm tutorial style): square, sum with activation_reduce, rsqrt, scale."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def rmsnorm_kernel(a_tensor, g_tensor):
    out_tensor = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    num_rows, d = a_tensor.shape
    ix = nl.arange(128)[:, None]
    iw = nl.arange(1)[:, None]
    iy = nl.arange(d)[None, :]
    g_tile = nl.load(g_tensor.reshape((1, d))[iw, iy])
    g_bcast = g_tile.broadcast_to((128, d))
    for i in nl.affine_range((num_rows + 127) // 128):
        rows = i * 128 + ix
        a_tile = nl.load(a_tensor[rows, iy], mask=(rows < num_rows))
        sq_sum = nl.ndarray((128, 1), dtype=nl.float32)
        nisa.activation_reduce(op=nl.square, data=a_tile, reduce_op=nl.add, reduce_res=sq_sum,
                               mask=(rows < num_rows))
        rms_reciprocal = nl.rsqrt(nl.add(nl.divide(sq_sum, d), 1e-6), mask=(rows < num_rows))
        out_tile = nl.multiply(a_tile, rms_reciprocal, mask=(rows < num_rows))
        out_tile = nl.multiply(out_tile, g_bcast, mask=(rows < num_rows))
        nl.store(out_tensor[rows, iy], value=out_tile, mask=(rows < num_rows))
    return out_tensor
