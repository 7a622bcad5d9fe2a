"""The store against a real `chroma run` server started by the test (HttpClient); two processes
writing at once lose nothing."""
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from accelopt_graph.memory.config import MemoryConfig
from accelopt_graph.memory.store import RetrievalQuery, open_store

from memory_items import make_experience

STARTUP_TIMEOUT_S = 60


def _chroma_cli() -> str:
    """The `chroma` console script of the chromadb package (on PATH, or next to this interpreter)."""
    found = shutil.which("chroma") or shutil.which("chroma", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail("the `chroma` command (installed with the chromadb package) is not on PATH")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def chroma_server(tmp_path):
    port = _free_port()
    log = (tmp_path / "chroma.log").open("w")
    proc = subprocess.Popen([_chroma_cli(), "run", "--path", str(tmp_path / "server-data"), "--host", "127.0.0.1",
                             "--port", str(port)], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not _listening(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"chroma run did not start on port {port}: {(tmp_path / 'chroma.log').read_text()[-2000:]}")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)
        log.close()


WRITER = textwrap.dedent("""
    import sys, time
    from accelopt_graph.memory.config import MemoryConfig
    from accelopt_graph.memory.experience import Experience, Provenance
    from accelopt_graph.memory.store import open_store
    url, run, n, start_at = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    store = open_store(MemoryConfig(server_url=url, embedding="hashing:128"))
    shared = Experience(slow_code="shared", fast_code="pass", speedup=2.0, polarity="positive", title="shared",
                        description="written by both writers", task="matmul")
    time.sleep(max(0.0, start_at - time.time()))  # both writers start together
    for i in range(n):
        if i == n // 2:
            store.add([shared])
        store.add([Experience(slow_code=f"def k_{run}_{i}(a): return nl.load(a)", fast_code="pass",
                              speedup=1.2 if i % 2 else 0.7, polarity="positive" if i % 2 else "negative",
                              title=f"{run} item {i}", description="tile the free dimension", task="matmul",
                              provenance=Provenance(run_id=run, iteration=i, parent_id=run, plan_id=str(i)))])
""")


def test_server_store_round_trip_and_retrieval(chroma_server):
    store = open_store(MemoryConfig(server_url=chroma_server, embedding="hashing:128"))
    ids = store.add([make_experience(i=i, plan=f"p{i}", speedup=1.5 if i else 0.5) for i in range(4)])
    assert store.add([make_experience(i=0, plan="p0", speedup=0.5)]) == ids[:1] and store.count() == 4
    got = store.retrieve(RetrievalQuery(task="matmul", bottleneck="hbm"), 3)
    assert len(got) == 3 and "negative" in {i.polarity for i in got}
    assert store.get(ids[2]).provenance.plan_id == "p2"


def test_two_processes_writing_at_once_lose_nothing(chroma_server):
    n = 40
    start_at = time.time() + 5
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, chroma_server, run, str(n), str(start_at)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for run in ("w1", "w2")]
    for w in writers:
        _, err = w.communicate(timeout=300)
        assert w.returncode == 0, err[-2000:]
    store = open_store(MemoryConfig(server_url=chroma_server, embedding="hashing:128"))
    assert store.count() == 2 * n + 1
    assert [i.title for i in store.list(run_id="")] == ["shared"]
    for run in ("w1", "w2"):
        assert sorted(i.provenance.iteration for i in store.list(run_id=run)) == list(range(n))
