"""Shared helpers for the simulator tests: load a kernel file from tests/nkisim/kernels."""
from pathlib import Path

import numpy as np
import pytest

from accelopt_graph.tools import nkisim

KERNELS = Path(__file__).parent / "kernels"


@pytest.fixture(scope="session")
def kernels():
    cache = {}

    def load(name: str):
        if name not in cache:
            cache[name] = nkisim.load_module(KERNELS / f"{name}.py")
        return cache[name]

    return load


def _rel_l2(out, ref) -> float:
    out = np.asarray(out, np.float64)
    ref = np.asarray(ref, np.float64)
    assert out.shape == ref.shape, (out.shape, ref.shape)
    return float(np.linalg.norm(out - ref) / np.linalg.norm(ref))


@pytest.fixture(scope="session")
def rel_l2():
    return _rel_l2


@pytest.fixture
def rng():
    return np.random.default_rng(0)
