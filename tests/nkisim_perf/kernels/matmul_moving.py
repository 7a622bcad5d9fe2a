"""out = aT.T @ b with operands resident in SBUF; the moving free size per nc_matmul is 512 or 128.

`repeat` re-runs the product to make the kernel tensor-engine bound (loads happen once).
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


def _matmul(aT, b, tile_n, repeat):
    K, M = aT.shape
    N = b.shape[1]
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    a_tile = nl.load(aT)
    b_tile = nl.load(b)
    for j in nl.affine_range(N // tile_n):
        acc = nl.zeros((M, tile_n), nl.float32, buffer=nl.psum)
        for r in nl.affine_range(repeat):
            acc += nisa.nc_matmul(a_tile, b_tile[:, j * tile_n:(j + 1) * tile_n])
        nl.store(out[:, j * tile_n:(j + 1) * tile_n], value=nl.copy(acc))
    return out


@nki.jit
def moving_512(aT, b):
    return _matmul(aT, b, 512, 16)


@nki.jit
def moving_128(aT, b):
    return _matmul(aT, b, 128, 16)
