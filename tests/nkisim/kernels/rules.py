"""One illegal kernel per compiler rule, each next to its legal twin (`<rule>_bad` / `<rule>_ok`)."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


def _copy_through(x, shape_p):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x[0:shape_p, :])
    nl.store(out[0:shape_p, :], value=t)
    return out


@nki.jit
def partitions_bad(x):  # x: [256, 64]
    t = nl.ndarray((256, 64), dtype=x.dtype, buffer=nl.sbuf)
    t[...] = nl.load(x)
    return _copy_through(x, 128)


@nki.jit
def partitions_ok(x):
    return _copy_through(x, 128)


@nki.jit
def psum_tile_bad(x):  # a PSUM tile of 1024 fp32 per partition = 4 KiB > one 2 KiB bank
    acc = nl.zeros((128, 1024), nl.float32, buffer=nl.psum)  # noqa: F841 - the allocation is the test
    return _copy_through(x, 128)


@nki.jit
def psum_tile_ok(x):
    acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)  # noqa: F841
    return _copy_through(x, 128)


def _matmul(a, b, m_free, n_free, k):
    out = nl.ndarray((m_free, n_free), dtype=nl.float32, buffer=nl.shared_hbm)
    sa = nl.load(a[0:k, 0:m_free])
    sb = nl.load(b[0:k, 0:n_free])
    res = nisa.nc_matmul(sa, sb)
    acc = nl.zeros((m_free, n_free), nl.float32, buffer=nl.psum)
    acc += res
    nl.store(out, value=nl.copy(acc))
    return out


@nki.jit
def matmul_stationary_bad(a, b):  # a: [128, 256], b: [128, 512]
    return _matmul(a, b, 256, 512, 128)


@nki.jit
def matmul_stationary_ok(a, b):
    return _matmul(a, b, 128, 512, 128)


@nki.jit
def matmul_moving_bad(a, b):  # b: [128, 1024]
    out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    sa = nl.load(a[0:128, 0:128])
    sb = nl.load(b[0:128, 0:1024])
    res = nisa.nc_matmul(sa, sb)
    nl.store(out, value=nl.copy(res))
    return out


@nki.jit
def matmul_moving_ok(a, b):
    return _matmul(a, b, 128, 512, 128)


@nki.jit
def matmul_contraction_bad(a, b):  # contraction on 256 partitions
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    sa = nl.load(a.reshape((256, 128))[0:128, :])
    sb = nl.load(b[0:128, 0:512])
    res = nisa.nc_matmul(sa[0:64, :], sb)  # 64 vs 128 partitions
    nl.store(out, value=nl.copy(res))
    return out


def _matmul_transposed_stationary(a, b, evict):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    sa = nl.load(a[0:128, 0:128])
    sb = nl.load(b[0:128, 0:512])
    pa = nisa.nc_transpose(sa)  # in PSUM
    if evict:
        pa = nl.copy(pa)  # evicted to SBUF first
    acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)  # noqa: F841
    acc += nisa.nc_matmul(pa, sb)
    nl.store(out, value=nl.copy(acc))
    return out


@nki.jit
def matmul_psum_input_bad(a, b):
    return _matmul_transposed_stationary(a, b, evict=False)


@nki.jit
def matmul_psum_input_ok(a, b):
    return _matmul_transposed_stationary(a, b, evict=True)


@nki.jit
def matmul_sbuf_result_bad(a, b):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    sa = nl.load(a[0:128, 0:128])
    sb = nl.load(b[0:128, 0:512])
    res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    res[...] = nisa.nc_matmul(sa, sb)
    nl.store(out, value=res)
    return out


@nki.jit
def mixed_indexing_bad(x):  # x: [128, 64]
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    t = nl.load(x[i_p, 0:64])
    nl.store(out, value=t)
    return out


@nki.jit
def mixed_indexing_ok(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    t = nl.load(x[i_p, i_f])
    nl.store(out, value=t)
    return out


@nki.jit
def scope_bad(x):  # x: [4, 128, 64]
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        t = nl.load(x[i])
    nl.store(out, value=t)  # t was created inside the loop body
    return out


@nki.jit
def scope_ok(x):
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 64), dtype=x.dtype)
    for i in nl.affine_range(4):
        t = nl.load(x[i])
        acc[...] = nl.add(acc, t)
    nl.store(out, value=acc)
    return out


@nki.jit
def sbuf_capacity_bad(x):  # x: [8, 128, 8192]; 8 live [128, 8192] fp32 tiles = 256 KiB > 192 KiB
    out = nl.ndarray((128, 8192), dtype=x.dtype, buffer=nl.shared_hbm)
    tiles = [nl.load(x[i]) for i in range(8)]
    acc = tiles[0]
    for i in range(1, 8):
        acc = nl.add(acc, tiles[i])
    nl.store(out, value=acc)
    return out


@nki.jit
def sbuf_capacity_ok(x):  # the same sum, each tile dead after its add
    out = nl.ndarray((128, 8192), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.load(x[0])
    for i in range(1, 8):
        acc = nl.add(acc, nl.load(x[i]))
    nl.store(out, value=acc)
    return out


def _psum_banks(x, n):
    out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    banks = [nl.zeros((128, 512), nl.float32, buffer=nl.psum) for _ in range(n)]
    acc = nl.copy(t)
    for b in banks:  # every bank is still in use here
        acc = nl.add(acc, b)
    nl.store(out, value=acc)
    return out


@nki.jit
def psum_capacity_bad(x):  # 9 live PSUM tiles of one bank each; PSUM has 8 banks
    return _psum_banks(x, 9)


@nki.jit
def psum_capacity_ok(x):
    return _psum_banks(x, 8)


@nki.jit
def out_of_bounds_bad(x):  # x: [200, 64], an unmasked partial tile
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(64)[None, :]
    for r in nl.affine_range(2):
        rows = r * 128 + nl.arange(128)[:, None]
        nl.store(out[rows, i_f], value=nl.load(x[rows, i_f]))
    return out


@nki.jit
def out_of_bounds_ok(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(64)[None, :]
    for r in nl.affine_range(2):
        rows = r * 128 + nl.arange(128)[:, None]
        nl.store(out[rows, i_f], value=nl.load(x[rows, i_f], mask=rows < 200), mask=rows < 200)
    return out


@nki.jit
def affine_dependency_bad(x):  # x: [8, 128, 64]; a prefix sum is a carried dependency
    out = nl.ndarray((8, 128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    run = nl.zeros((128, 64), dtype=nl.float32)
    for i in nl.affine_range(8):
        run[...] = nl.add(run, nl.load(x[i]))
        nl.store(out[i], value=run)
    return out


@nki.jit
def affine_dependency_ok(x):
    out = nl.ndarray((8, 128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    run = nl.zeros((128, 64), dtype=nl.float32)
    for i in nl.sequential_range(8):
        run[...] = nl.add(run, nl.load(x[i]))
        nl.store(out[i], value=run)
    return out


@nki.jit
def partition_mismatch_bad(a, b):  # a: [128, 64], b: [1, 64]
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nisa.tensor_tensor(nl.load(a), nl.load(b), op=nl.add))
    return out


@nki.jit
def partition_mismatch_ok(a, b):
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nisa.tensor_tensor(nl.load(a), nl.load(b).broadcast_to((128, 64)),
                                           op=nl.add))
    return out


@nki.jit
def unwritten_output_bad(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    return out


@nki.jit
def uninitialised_read(x):  # reads a tile it never wrote: NaN shows up in the output
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=x.dtype)
    t[0:64, :] = nl.load(x[0:64, :])
    nl.store(out, value=t)
    return out


@nki.jit
def unsupported_api(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.dropout(nl.load(x), rate=0.5))
    return out


@nki.jit
def mutate_parameter_bad(x):
    nl.store(x, value=nl.load(x))
    return x
