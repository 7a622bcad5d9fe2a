"""2-D transpose three ways: PE nc_transpose, nl.transpose, and nl.load_transpose2d (DMA)."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def transpose2d_kernel(x):
    R, C = x.shape  # multiples of 128
    out_pe = nl.ndarray((C, R), dtype=x.dtype, buffer=nl.shared_hbm)
    out_nl = nl.ndarray((C, R), dtype=x.dtype, buffer=nl.shared_hbm)
    out_dma = nl.ndarray((C, R), dtype=x.dtype, buffer=nl.shared_hbm)
    for r in nl.affine_range(R // 128):
        for c in nl.affine_range(C // 128):
            t = nl.load(x[r * 128:(r + 1) * 128, c * 128:(c + 1) * 128])
            tp = nisa.nc_transpose(t)  # PSUM
            nl.store(out_pe[c * 128:(c + 1) * 128, r * 128:(r + 1) * 128], value=nl.copy(tp))
            tn = nl.transpose(t)
            nl.store(out_nl[c * 128:(c + 1) * 128, r * 128:(r + 1) * 128], value=tn)
            td = nl.load_transpose2d(x[r * 128:(r + 1) * 128, c * 128:(c + 1) * 128])
            nl.store(out_dma[c * 128:(c + 1) * 128, r * 128:(r + 1) * 128], value=td)
    return out_pe, out_nl, out_dma
