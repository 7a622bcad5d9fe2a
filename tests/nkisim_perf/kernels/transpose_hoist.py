"""out[:, chunk j] = sum over 4 passes of a.T @ b[:, chunk j]: the transpose of `a` is loop-invariant.

`in_loop` re-transposes `a` for every chunk (what a first draft does); `hoisted` transposes once.
Both keep `b` resident, so the tensor engine is the bottleneck.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

CHUNK = 128
PASSES = 4


@nki.jit
def in_loop(a, b):
    P, N = b.shape
    out = nl.ndarray((P, N), dtype=b.dtype, buffer=nl.shared_hbm)
    a_tile = nl.load(a)
    b_tile = nl.load(b)
    for j in nl.affine_range(N // CHUNK):
        a_t = nl.copy(nisa.nc_transpose(a_tile), dtype=a.dtype)
        acc = nl.zeros((P, CHUNK), nl.float32, buffer=nl.psum)
        for r in nl.affine_range(PASSES):
            acc += nisa.nc_matmul(a_t, b_tile[:, j * CHUNK:(j + 1) * CHUNK])
        nl.store(out[:, j * CHUNK:(j + 1) * CHUNK], value=nl.copy(acc, dtype=b.dtype))
    return out


@nki.jit
def hoisted(a, b):
    P, N = b.shape
    out = nl.ndarray((P, N), dtype=b.dtype, buffer=nl.shared_hbm)
    a_tile = nl.load(a)
    b_tile = nl.load(b)
    a_t = nl.copy(nisa.nc_transpose(a_tile), dtype=a.dtype)
    for j in nl.affine_range(N // CHUNK):
        acc = nl.zeros((P, CHUNK), nl.float32, buffer=nl.psum)
        for r in nl.affine_range(PASSES):
            acc += nisa.nc_matmul(a_t, b_tile[:, j * CHUNK:(j + 1) * CHUNK])
        nl.store(out[:, j * CHUNK:(j + 1) * CHUNK], value=nl.copy(acc, dtype=b.dtype))
    return out
