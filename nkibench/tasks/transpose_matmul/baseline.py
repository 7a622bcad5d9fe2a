"""transpose_matmul baseline: lhs_t slices are stationary as they are; rhs re-streamed per M chunk."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


NS = 512  # one PSUM bank of fp32


def _stripe(lt, rhs, out, m0, n0, width, KT, MW):
    """Multiply a loaded lhs_t chunk with the `width`-wide rhs stripe at column n0 (width static)."""
    rt = nl.load(rhs[:, :, n0:n0 + width])  # [128, K/128, width]
    for a in nl.affine_range(MW // 128):
        for s in nl.affine_range(width // NS):
            _tile(lt, rt, out, m0, a, n0, s * NS, NS, KT)
        if width % NS:
            _tile(lt, rt, out, m0, a, n0, (width // NS) * NS, width % NS, KT)


def _tile(lt, rt, out, m0, a, n0, off, sw, KT):
    """One 128 x sw output tile: K/128 accumulating matmuls, a PSUM copy, a store."""
    acc = nl.zeros((128, sw), dtype=nl.float32, buffer=nl.psum)
    for j in nl.affine_range(KT):
        acc += nisa.nc_matmul(lt[:, j, a * 128:(a + 1) * 128], rt[:, j, off:off + sw])
    nl.store(out[m0 // 128 + a, :, n0 + off:n0 + off + sw], value=nl.copy(acc, dtype=out.dtype))


@nki.jit
def kernel(lhs_t, rhs):
    # lhs_t: [128, K/128, M], rhs: [128, K/128, N], both with k = (K/128) p + j
    P, KT, M = lhs_t.shape
    N = rhs.shape[2]
    MW = 1024 if M % 1024 == 0 else 128
    NW = 1024
    assert M % 128 == 0, "baseline needs M % 128 == 0"
    out = nl.ndarray((M // P, P, N), dtype=lhs_t.dtype, buffer=nl.shared_hbm)
    for mc in nl.affine_range(M // MW):
        lt = nl.load(lhs_t[:, :, mc * MW:(mc + 1) * MW])
        for nc in nl.affine_range(N // NW):
            _stripe(lt, rhs, out, mc * MW, nc * NW, NW, KT, MW)
        if N % NW:
            _stripe(lt, rhs, out, mc * MW, (N // NW) * NW, N % NW, KT, MW)
    return out
