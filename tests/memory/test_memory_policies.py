"""Pure retrieval (MMR) and eviction policies on hand-made items."""
import subprocess
import sys

import numpy as np
import pytest

from accelopt_graph.memory.embedding import HashingEmbedder, make_embedder
from accelopt_graph.memory.eviction import StoredItem, choose_evictions, informativeness
from accelopt_graph.memory.retrieval import combine, mmr_select


def unit(*rows):
    v = np.asarray(rows, dtype=float)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def pick(vectors, query, k, lam, *, sources=None, polarities=None, recency=None, share=0.0):
    n = len(vectors)
    return mmr_select(vectors @ query, vectors @ vectors.T, k=k, lambda_=lam,
                      sources=sources or list(range(n)), polarities=polarities or ["positive"] * n,
                      recency=recency or [0.0] * n, min_polarity_share=share)


def test_mmr_diversity_changes_the_pick_versus_plain_top_k():
    # A and A' are near-duplicates and the most relevant; B is less relevant but different.
    vectors = unit([1.0, 0.05, 0.0], [1.0, 0.0, 0.05], [0.6, 0.8, 0.0])
    query = unit([1.0, 0.1, 0.0])[0]
    assert pick(vectors, query, 2, lam=1.0) == [0, 1]
    assert pick(vectors, query, 2, lam=0.5) == [0, 2]


def test_at_most_one_item_per_source():
    vectors = unit([1, 0, 0], [0.99, 0.1, 0], [0, 1, 0])
    query = unit([1, 0, 0])[0]
    assert pick(vectors, query, 3, lam=1.0, sources=["s", "s", "t"]) == [0, 2]


def test_both_polarities_represented_when_both_exist():
    vectors = unit([1, 0, 0], [0.9, 0.1, 0], [0.8, 0.2, 0], [0.7, 0.3, 0], [0, 0, 1])
    query = unit([1, 0, 0])[0]
    pols = ["positive"] * 4 + ["negative"]
    assert 4 not in pick(vectors, query, 4, lam=1.0, polarities=pols, share=0.0)
    chosen = pick(vectors, query, 4, lam=1.0, polarities=pols, share=0.25)
    assert 4 in chosen and len(chosen) == 4


def test_recency_breaks_exact_ties():
    vectors = unit([1, 0], [1, 0], [1, 0])
    query = unit([1, 0])[0]
    assert pick(vectors, query, 1, lam=1.0, recency=[1.0, 3.0, 2.0]) == [1]


def test_mmr_rejects_inconsistent_inputs():
    with pytest.raises(ValueError, match="disagree"):
        mmr_select(np.zeros(2), np.zeros((3, 3)), k=1, lambda_=0.5, sources=[0, 1], polarities=["a", "b"],
                   recency=[0, 0])


def test_combine_weights_parts_equally_and_needs_a_part():
    short, long_ = np.array([[1.0, 0.0]]), np.array([[0.0, 50.0]])
    q = combine(np.vstack([short, long_]))
    assert q == pytest.approx([2 ** -0.5, 2 ** -0.5])
    with pytest.raises(ValueError, match="nothing to embed"):
        combine(np.zeros((0, 4)))


def test_hashing_embedding_ranks_related_code_closer():
    e = HashingEmbedder(256)
    a, b, c = e.embed(["x = nl.matmul(a_tile, b_tile, transpose_x=True)",
                       "acc = nl.matmul(lhs_tile, rhs_tile, transpose_x=True)",
                       "y = nl.exp(nl.subtract(x, row_max))"])
    assert a @ b > a @ c
    assert np.linalg.norm(a) == pytest.approx(1.0, abs=1e-6)


def test_hashing_embedding_is_stable_across_processes():
    code = "import numpy as np; from accelopt_graph.memory.embedding import HashingEmbedder; " \
           "print(HashingEmbedder(64).embed(['nl.load tile partition'])[0].round(5).tolist())"
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
            for _ in range(2)}
    here = HashingEmbedder(64).embed(["nl.load tile partition"])[0].round(5).tolist()
    assert outs == {f"{here}\n"}


def test_embedding_specs_fail_loudly():
    assert make_embedder("hashing:128").spec == "hashing:128"
    with pytest.raises(ValueError, match="unknown kind"):
        make_embedder("chroma-default")
    with pytest.raises(ValueError, match="needs a model name"):
        make_embedder("openai")
    with pytest.raises(ValueError, match="integer"):
        make_embedder("hashing:big")


def items(*specs):
    return [StoredItem(id=i, created_at_s=t, speedup=s) for i, t, s in specs]


STORE = items(("old", 0.0, 2.0), ("mid", 10.0, 1.01), ("new", 20.0, 0.5), ("newest", 30.0, 1.05))


def test_fifo_evicts_oldest():
    assert choose_evictions(STORE, policy="fifo", max_items=2) == ["old", "mid"]


def test_score_evicts_least_informative():
    assert choose_evictions(STORE, policy="score", max_items=2, now_s=30.0) == ["mid", "newest"]


def test_score_decays_with_age():
    fresh = informativeness(StoredItem("a", 100 * 86_400.0, 2.0), now_s=100 * 86_400.0, half_life_days=30)
    aged = informativeness(StoredItem("b", 40 * 86_400.0, 2.0), now_s=100 * 86_400.0, half_life_days=30)
    assert aged == pytest.approx(fresh / 4)


def test_random_eviction_is_seeded():
    big = items(*[(f"i{n}", float(n), 1.5) for n in range(50)])
    first = choose_evictions(big, policy="random", max_items=40, seed=7)
    assert first == choose_evictions(list(reversed(big)), policy="random", max_items=40, seed=7)
    assert first != choose_evictions(big, policy="random", max_items=40, seed=8)
    assert len(set(first)) == 10


def test_unlimited_and_under_capacity_evict_nothing():
    assert choose_evictions(STORE, policy="unlimited", max_items=None) == []
    assert choose_evictions(STORE, policy="fifo", max_items=4) == []


def test_bounded_policy_without_bound_is_an_error():
    with pytest.raises(ValueError, match="max_items"):
        choose_evictions(STORE, policy="fifo", max_items=None)


def test_protected_new_items_survive_unless_they_alone_exceed_the_bound():
    old = items(*[(f"old{n}", float(n), 1.5) for n in range(6)])
    new = items(*[(f"new{n}", 100.0 + n, 1.5) for n in range(3)])
    doomed = choose_evictions(old + new, policy="random", max_items=4, seed=1, protect={"new0", "new1", "new2"})
    assert len(doomed) == 5 and all(d.startswith("old") for d in doomed)
    doomed = choose_evictions(old + new, policy="fifo", max_items=2, protect={"new0", "new1", "new2"})
    assert doomed == [f"old{n}" for n in range(6)] + ["new0"]


def test_sentence_transformers_without_the_package_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ImportError, match="pip install sentence-transformers"):
        make_embedder("sentence-transformers:all-MiniLM-L6-v2")


def test_openai_embedder_normalises_endpoint_vectors(monkeypatch):
    from types import SimpleNamespace

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    embedder = make_embedder("openai:text-embedding-3-small")
    calls = []

    def create(*, model, input):
        calls.append((model, input))
        return SimpleNamespace(data=[SimpleNamespace(embedding=[3.0, 4.0]) for _ in input])

    embedder._client = SimpleNamespace(embeddings=SimpleNamespace(create=create))
    out = embedder.embed(["a", "b"])
    assert calls == [("text-embedding-3-small", ["a", "b"])]
    assert out == pytest.approx(np.array([[0.6, 0.8], [0.6, 0.8]])) and embedder.spec == "openai:text-embedding-3-small"
