"""out[:, j-th chunk] = a.T @ b[:, chunk]: the transpose of `a` is loop-invariant.

`in_loop` re-transposes `a` for every chunk (what a first draft does); `hoisted` transposes once.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def in_loop(a, b):
    P, N = b.shape
    out = nl.ndarray((P, N), dtype=b.dtype, buffer=nl.shared_hbm)
    a_tile = nl.load(a)
    for j in nl.affine_range(N // 512):
        a_t = nl.copy(nisa.nc_transpose(a_tile), dtype=a.dtype)
        b_tile = nl.load(b[:, j * 512:(j + 1) * 512])
        acc = nl.zeros((P, 512), nl.float32, buffer=nl.psum)
        acc += nisa.nc_matmul(a_t, b_tile)
        nl.store(out[:, j * 512:(j + 1) * 512], value=nl.copy(acc, dtype=b.dtype))
    return out


@nki.jit
def hoisted(a, b):
    P, N = b.shape
    out = nl.ndarray((P, N), dtype=b.dtype, buffer=nl.shared_hbm)
    a_tile = nl.load(a)
    a_t = nl.copy(nisa.nc_transpose(a_tile), dtype=a.dtype)
    for j in nl.affine_range(N // 512):
        b_tile = nl.load(b[:, j * 512:(j + 1) * 512])
        acc = nl.zeros((P, 512), nl.float32, buffer=nl.psum)
        acc += nisa.nc_matmul(a_t, b_tile)
        nl.store(out[:, j * 512:(j + 1) * 512], value=nl.copy(acc, dtype=b.dtype))
    return out
