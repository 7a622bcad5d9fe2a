"""Honest memory: lazy block allocation of huge logical buffers, and capacity accounting."""
import resource

import numpy as np

from accelopt_graph.tools import nkisim
from accelopt_graph.tools.nkisim import language as nl
from accelopt_graph.tools.nkisim.storage import BlockStore


def test_multi_gigabyte_block_buffer_is_allocated_lazily(rng):
    seen = {}

    def kernel(x):
        out = nl.ndarray((4, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        # 16 x 4 x 4 x 8 x 2 blocks of [128, 512] fp32: 16 GiB logical
        big = nl.ndarray((16, 4, 4, 8, 2, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
        seen["big"] = big
        for i in nl.affine_range(4):
            big[i, 0, 1, 2, 1] = nl.load(x[i])
            nl.store(out[i], value=nl.exp(big[i, 0, 1, 2, 1]))
        return out

    x = rng.standard_normal((4, 128, 512)).astype(np.float32)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    res = nkisim.run_kernel(kernel, (x,))
    grew_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    np.testing.assert_allclose(res.outputs, np.exp(x), rtol=1e-6)
    store = seen["big"].data
    assert isinstance(store, BlockStore) and len(store.blocks) == 4
    assert store.nbytes_allocated == 4 * 128 * 512 * 4
    assert grew_kib < 512 * 1024  # far below the 16 GiB the kernel declared
    assert any("rotate or spill its blocks" in w for w in res.warnings)


def test_peak_live_bytes_follow_last_use(rng):
    def kernel(x):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        keep = nl.zeros((128, 1024), nl.float32)  # 4 KiB per partition, used at the end
        for i in nl.affine_range(8):
            tmp = nl.zeros((128, 2048), nl.float32)  # 8 KiB, one live at a time
            keep[:, 0:64] = nl.add(keep[:, 0:64], tmp[:, 0:64])
        t = nl.load(x)  # 256 B
        nl.store(out, value=nl.add(t, keep[:, 0:64]))
        return out

    res = nkisim.run_kernel(kernel, (rng.standard_normal((128, 64)).astype(np.float32),))
    # keep (4 KiB) + one tmp (8 KiB); the add results are written into keep directly
    assert res.peak_sbuf_bytes_per_partition == 4096 + 8192


def test_copies_keep_their_values_when_the_source_changes(rng):
    """Loads and copies share the source's bytes until the source is written (copy on write)."""
    def kernel(x):
        out = nl.ndarray((3, 128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        scratch = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)
        nl.store(scratch, value=t)
        before = nl.load(scratch)  # views scratch's bytes
        snapshot = nl.copy(t)  # views t's bytes
        nl.store(scratch, value=nl.multiply(t, 2.0))  # scratch changes: `before` must not
        t[...] = nl.exp(t)  # t changes in place: `snapshot` must not
        nl.store(out[0], value=before)
        nl.store(out[1], value=snapshot)
        nl.store(out[2], value=t)
        return out

    x = rng.standard_normal((128, 64)).astype(np.float32)
    out = nkisim.simulate_kernel(kernel, x)
    np.testing.assert_array_equal(out[0], x)
    np.testing.assert_array_equal(out[1], x)
    np.testing.assert_allclose(out[2], np.exp(x), rtol=1e-6)


def test_writing_into_a_loaded_tile_never_touches_the_input(rng):
    def kernel(x):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)
        t[0:64, :] = nl.zeros((64, 64), nl.float32)
        nl.store(out, value=t)
        return out

    x = rng.standard_normal((128, 64)).astype(np.float32)
    keep = x.copy()
    out = nkisim.simulate_kernel(kernel, x)
    np.testing.assert_array_equal(x, keep)
    np.testing.assert_array_equal(out[64:], x[64:])
    assert not out[:64].any()
