"""The Chroma experience store against a real embedded Chroma (PersistentClient in tmp_path)."""
import subprocess
import sys
import textwrap

import pytest

from accelopt_graph.memory.config import MemoryConfig
from accelopt_graph.memory.experience import format_experiences
from accelopt_graph.memory.store import ChromaExperienceStore, NullExperienceStore, RetrievalQuery, open_store

from memory_items import KERNELS, make_experience


@pytest.fixture
def store(tmp_path):
    return open_store(MemoryConfig(path=tmp_path / "mem", embedding="hashing:256"))


def test_add_is_idempotent_and_ids_derive_from_content(store):
    items = [make_experience(i=i, plan=f"plan{i}") for i in range(3)]
    ids = store.add(items)
    assert len(set(ids)) == 3 and store.count() == 3
    assert store.add(items) == ids
    assert store.add([make_experience(i=0, plan="plan0", minutes=500)]) == ids[:1]
    assert store.count() == 3
    assert store.get(ids[0]).created_at == items[0].created_at


def test_writes_are_durable_across_processes(tmp_path, store):
    script = textwrap.dedent(f"""
        from accelopt_graph.memory.config import MemoryConfig
        from accelopt_graph.memory.experience import Experience
        from accelopt_graph.memory.store import open_store
        s = open_store(MemoryConfig(path={str(tmp_path / 'mem')!r}, embedding="hashing:256"))
        print(s.add([Experience(slow_code="a", fast_code="b", speedup=1.5, polarity="positive",
                                title="from another process", description="d")])[0])
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    written = out.stdout.strip().splitlines()[-1]
    reopened = open_store(MemoryConfig(path=tmp_path / "mem", embedding="hashing:256"))
    assert reopened.get(written).title == "from another process"


def test_export_then_import_into_empty_store_round_trips_every_field(tmp_path, store):
    items = [make_experience(task, speedup=s, i=i, plan=f"plan{i}")
             for i, (task, s) in enumerate([("matmul", 1.4), ("rmsnorm", 0.6), ("silu", 1.1)])]
    store.add(items)
    path = tmp_path / "mem.jsonl"
    assert store.export_jsonl(path) == 3
    other = open_store(MemoryConfig(path=tmp_path / "other", embedding="hashing:256"))
    assert other.count() == 0
    other.import_jsonl(path)
    dump = lambda s: sorted((i.model_dump() for i in s.list()), key=lambda d: d["id"])  # noqa: E731
    assert dump(other) == dump(store)
    assert dump(other) == sorted((i.with_id().model_dump() for i in items), key=lambda d: d["id"])


def test_import_names_the_bad_line(tmp_path, store):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(make_experience().model_dump_json() + "\n{\"title\": 3}\n")
    with pytest.raises(ValueError, match=r"bad.jsonl:2"):
        store.import_jsonl(bad)
    with pytest.raises(FileNotFoundError):
        store.import_jsonl(tmp_path / "missing.jsonl")


def test_cross_task_items_from_run_on_task_a_reach_planner_of_related_task_b(store):
    run_a = [make_experience("matmul", speedup=s, i=i, run="run-a", plan=f"a{i}")
             for i, s in enumerate([1.5, 1.2, 0.6])]
    unrelated = [make_experience(task, speedup=1.3, i=i, run="run-x", plan=f"x{i}",
                                 description=f"Fuse the {task} activation into one pass over SBUF tiles ({i}).")
                 for task in ("silu", "rmsnorm") for i in range(3)]
    store.add(unrelated + run_a)
    query = RetrievalQuery(task="bmm", family="matmul", semantics="batched matmul np.matmul(a, b)",
                           code=KERNELS["matmul"].replace("matmul(", "bmm("),
                           bottleneck="HBM bound: stationary operand reloaded from HBM")
    got = store.retrieve(query, 3)
    assert {i.provenance.run_id for i in got} == {"run-a"}
    assert {i.polarity for i in got} == {"positive", "negative"}
    prompt = format_experiences(got)
    assert "matmul rewrite 0" in prompt and "avoid it or do the reverse" in prompt


def test_retrieval_one_per_source_and_exclusions(store):
    same_source = [make_experience(i=i, parent="p", plan="same") for i in range(5)]
    others = [make_experience(i=10 + i, parent="q", plan=f"o{i}", speedup=0.5) for i in range(3)]
    ids = store.add(same_source + others)
    got = store.retrieve(RetrievalQuery(task="matmul", code=KERNELS["matmul"]), 8)
    assert len(got) == 4 and len({i.source_key for i in got}) == 4
    excluded = store.retrieve(RetrievalQuery(task="matmul", exclude_ids=tuple(ids[5:])), 8)
    assert {i.source_key for i in excluded} == {("p", "same")}


def test_namespaces_by_hardware_and_backend(store):
    store.add([make_experience(i=0), make_experience(i=1, hardware="trn2"), make_experience(i=2, backend="neuron")])
    assert store.count() == 3
    got = store.retrieve(RetrievalQuery(task="matmul", hardware="trn2"), 5)
    assert [i.hardware for i in got] == ["trn2"]
    assert store.retrieve(RetrievalQuery(task="matmul", hardware="inf2"), 5) == []
    assert [i.backend for i in store.list(backend="neuron")] == ["neuron"]


def test_list_filters_get_and_delete(store):
    ids = store.add([make_experience(i=0), make_experience(i=1, speedup=0.5, run="r2"), make_experience("silu", i=2)])
    assert [i.id for i in store.list()] == ids[::-1]
    assert [i.id for i in store.list(polarity="negative")] == [ids[1]]
    assert [i.id for i in store.list(task="matmul", run_id="run-a")] == [ids[0]]
    assert store.delete([ids[0], "exp-missing"]) == 1
    with pytest.raises(KeyError, match="exp-missing"):
        store.get("exp-missing")


def test_bounded_store_evicts_on_add_and_prune_by_run(tmp_path):
    cfg = MemoryConfig(path=tmp_path / "m", embedding="hashing:64", eviction="fifo", max_items=3)
    store = open_store(cfg)
    ids = store.add([make_experience(i=i, plan=f"p{i}") for i in range(5)])
    assert {i.id for i in store.list()} == set(ids[2:])
    assert store.prune(policy="fifo", max_items=1, dry_run=True) == ids[2:4]
    assert store.count() == 3
    assert store.prune(policy="fifo", max_items=1, run_id="other-run") == []
    assert store.prune(policy="fifo", max_items=1) == ids[2:4]
    assert [i.id for i in store.list()] == ids[4:]


def test_collection_embedding_mismatch_is_an_error(tmp_path):
    open_store(MemoryConfig(path=tmp_path / "m", embedding="hashing:64")).add([make_experience()])
    other = open_store(MemoryConfig(path=tmp_path / "m", embedding="hashing:128"))
    with pytest.raises(ValueError, match="memory.embedding"):
        other.retrieve(RetrievalQuery(task="matmul"), 4)


def test_disabled_memory_is_a_null_store(tmp_path):
    store = open_store(MemoryConfig(enabled=False, path=tmp_path / "never"))
    assert isinstance(store, NullExperienceStore) and not (tmp_path / "never").exists()
    store.add([make_experience()])
    assert store.retrieve(RetrievalQuery(task="matmul"), 4) == [] and store.count() == 0
    assert isinstance(open_store(MemoryConfig(path=tmp_path / "m")), ChromaExperienceStore)


def test_concurrent_threads_add_and_retrieve(store):
    """The graph calls the store from worker threads (asyncio.to_thread) during Send fan-out."""
    from concurrent.futures import ThreadPoolExecutor

    def work(n):
        store.add([make_experience(i=n, plan=f"t{n}", speedup=1.5 if n % 2 else 0.5)])
        return store.retrieve(RetrievalQuery(task="matmul", code=KERNELS["matmul"]), 4)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(work, range(32)))
    assert store.count() == 32 and all(1 <= len(r) <= 4 for r in results)


def test_store_mmr_trades_relevance_for_diversity(tmp_path):
    def items():
        twins = [make_experience(i=i, plan=f"twin{i}", description="Keep the stationary matmul operand in SBUF.")
                 for i in range(3)]
        other = make_experience("rmsnorm", i=9, plan="other", description="Fuse rmsnorm scaling into the matmul.")
        return twins + [other]

    query = RetrievalQuery(task="matmul", code=KERNELS["matmul"], bottleneck="stationary matmul operand SBUF")
    picks = {}
    for lam in (1.0, 0.3):
        store = open_store(MemoryConfig(path=tmp_path / f"m{lam}", embedding="hashing:256", mmr_lambda=lam))
        store.add(items())
        picks[lam] = [i.provenance.plan_id for i in store.retrieve(query, 2)]
    assert "other" not in picks[1.0] and "other" in picks[0.3]


def test_relevance_floor_keeps_unrelated_items_out_of_the_prompt(tmp_path):
    items = [make_experience(i=0, plan="a"), make_experience("silu", i=1, plan="b")]
    query = RetrievalQuery(task="matmul", code=KERNELS["matmul"], bottleneck="matmul transpose_x")
    relevance = {}
    for floor in (-1.0, 0.5):
        store = open_store(MemoryConfig(path=tmp_path / f"m{floor}", embedding="hashing:256", min_relevance=floor))
        store.add(items)
        relevance[floor] = [i.task for i in store.retrieve(query, 4)]
    assert sorted(relevance[-1.0]) == ["matmul", "silu"] and relevance[0.5] == ["matmul"]
