"""Fixtures of the nkibench tests: one simulator backend for the whole module run."""
import pytest

from accelopt_graph.tools.backend import EvalSettings


@pytest.fixture(scope="session")
def sim_backend():
    from accelopt_graph.tools.registry import make_backend

    backend = make_backend("nkisim", hardware="trn1", workers=2)
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def settings():
    return EvalSettings(backend="nkisim", hardware="trn1", timeout_s=300.0)
