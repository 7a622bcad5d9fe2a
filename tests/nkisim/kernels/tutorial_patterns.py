"""Indexing patterns from the public NKI tutorials: tile-to-tile copies with permuted aranges,
nested views of block tensors, and 2-D average pooling with arange arithmetic."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def transpose_free_dims(x):
    """x: [P, F1 * F2] -> out: [P, F2 * F1] (swap the two free dims inside SBUF)."""
    P, F = x.shape
    f1, f2 = 8, F // 8
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    in_tile = nl.ndarray((P, f1, f2), dtype=x.dtype)
    i_p, i_a, i_b = nl.mgrid[0:P, 0:f1, 0:f2]
    in_tile[i_p, i_a, i_b] = nl.load(x.reshape((P, f1, f2))[i_p, i_a, i_b])
    out_tile = nl.ndarray((P, f2, f1), dtype=x.dtype)
    j_p, j_b, j_a = nl.mgrid[0:P, 0:f2, 0:f1]
    out_tile[j_p, j_b, j_a] = in_tile[j_p, j_a, j_b]
    nl.store(out.reshape((P, f2, f1)), value=out_tile)
    return out


@nki.jit
def block_tiles(x):
    """Load [4, 128, 256] into a block-dim SBUF tensor, then copy tiles out via nested views."""
    NB, P, F = x.shape
    out = nl.ndarray((NB, P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    tiles = nl.ndarray((NB, nl.par_dim(P), F), dtype=x.dtype, buffer=nl.sbuf)
    i = nl.mgrid[0:P, 0:F]
    for b in nl.affine_range(NB):
        tiles[b] = nl.load(x[b])
    for b in nl.affine_range(NB):
        res = nl.ndarray((P, F), dtype=x.dtype)
        res[i.p, i.x] = nl.copy(tiles[b][i.p, i.x])
        nl.store(out[b], value=res)
    return out


@nki.jit
def avgpool2d(x, pool):
    """x: [C <= 128, H, W] -> [C, H // pool, W // pool]."""
    C, H, W = x.shape
    ho, wo = H // pool, W // pool
    out = nl.ndarray((C, ho, wo), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    i0, i1, i2, i3, i4 = nl.mgrid[0:C, 0:ho, 0:pool, 0:wo, 0:pool]
    s = nl.sum(t[i0, pool * i1 + i2, pool * i3 + i4], axis=[2, 4])
    nl.store(out, value=nl.multiply(s, 1.0 / (pool * pool)))
    return out
