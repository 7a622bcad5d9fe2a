"""Benchmark the optimization memory: insert N synthetic experiences, then time retrieval for planner
calls (k = ExpN). Prints a table; not a test. Goal: p50 retrieval under 50 ms at 10,000 items.

    python benchmarks/memory_retrieval.py [--items 10000] [--queries 200] [--server http://host:port]
"""
from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from accelopt_graph.memory.config import MemoryConfig
from accelopt_graph.memory.experience import Experience, Provenance
from accelopt_graph.memory.store import ChromaExperienceStore, RetrievalQuery, open_store

TASKS = {"matmul": "matmul", "bmm": "matmul", "lora": "matmul", "transpose_matmul": "matmul",
         "rmsnorm_matmul": "fused", "add_rmsnorm_matmul": "fused", "swiglu": "fused", "bmm_softmax": "fused",
         "gqa_full": "attention", "silu": "elementwise", "adamw": "elementwise", "rope": "elementwise",
         "mamba": "scan", "matmul_add_rmsnorm": "fused"}
OPS = ["nl.load", "nl.store", "nl.matmul", "nisa.nc_matmul", "nl.exp", "nl.multiply", "nl.add", "nl.transpose",
       "nisa.nc_transpose", "nl.sum", "nl.max", "nl.rsqrt", "nl.sigmoid", "nl.zeros", "nl.affine_range",
       "nl.sequential_range", "nisa.activation", "nisa.tensor_tensor", "nl.load_transpose2d", "nl.mean"]
IDEAS = ["Keep the stationary operand resident in SBUF", "Fuse the elementwise epilogue into the PSUM drain",
         "Tile the free dimension to 512 to fill the PE array", "Transpose on the PE array instead of via DMA",
         "Hoist loads out of the inner loop", "Double-buffer DMA against compute", "Use bf16 matmul inputs",
         "Accumulate in PSUM across the K loop", "Replace sequential_range by affine_range",
         "Split the reduction across partitions", "Merge small DMAs into one large transfer",
         "Move the activation onto the scalar engine"]
BOTTLENECKS = ["HBM bound: {t} reloads operands", "PE array idle 60%", "vector engine 85% active",
               "PSUM spill bytes high", "DMA queue serialized", "scalar engine bound on exp"]


def kernel(rng: random.Random, task: str) -> str:
    body = "\n".join(f"    t{j} = {rng.choice(OPS)}(t{max(j - 1, 0)}[i_p, i_f_{rng.randint(0, 9)}])"
                     for j in range(rng.randint(6, 20)))
    return f"def {task}_kernel(a, b, out):\n{body}\n    nl.store(out, t0)\n"


def make_items(n: int, seed: int) -> list[Experience]:
    rng = random.Random(seed)
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    items = []
    for i in range(n):
        task = rng.choice(list(TASKS))
        speedup = rng.choice([rng.uniform(1.05, 3.0), rng.uniform(0.3, 0.85)])
        idea = rng.choice(IDEAS)
        items.append(Experience(
            slow_code=kernel(rng, task), fast_code=kernel(rng, task), speedup=speedup,
            polarity="positive" if speedup > 1 else "negative", title=f"{idea} ({i})",
            description=f"{idea}. {rng.choice(BOTTLENECKS).format(t=task)}.", plan=idea,
            snippet_before=f"x = {rng.choice(OPS)}(a)", snippet_after=f"x = {rng.choice(OPS)}(a)",
            task=task, family=TASKS[task],
            provenance=Provenance(run_id=f"run{i // 500}", iteration=i % 16, parent_id=f"c{i // 24}",
                                  plan_id=f"plan{i % 24}", sample_id=f"s{i}"),
            created_at=t0 + timedelta(seconds=i)))
    return items


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--embedding", default="hashing")
    ap.add_argument("--server", default=None, help="chroma run URL; default: embedded store in a temp dir")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        config = MemoryConfig(path=Path(tmp) / "memory", server_url=args.server, embedding=args.embedding,
                              collection=f"bench{args.seed}{time.time_ns() % 10**6}", capacity=args.k)
        store = open_store(config)
        items = make_items(args.items + 20 * 8, args.seed)
        bulk, rounds = items[:args.items], items[args.items:]
        start = time.perf_counter()
        for i in range(0, len(bulk), 500):
            store.add(bulk[i:i + 500])
        insert_s = time.perf_counter() - start
        round_ms = []  # one search iteration writes TopK = 8 summarized items
        for i in range(0, len(rounds), 8):
            t = time.perf_counter()
            store.add(rounds[i:i + 8])
            round_ms.append((time.perf_counter() - t) * 1e3)

        # The same collection read with lambda = 1 (plain top-k by relevance), to show what MMR buys.
        plain = ChromaExperienceStore(store.client, embedder=store.embedder,
                                      config=MemoryConfig.model_validate({**config.model_dump(), "mmr_lambda": 1.0}))
        rng = random.Random(args.seed + 1)
        latencies_ms, same_family, negatives, ideas_mmr, ideas_plain = [], 0, 0, 0, 0
        for _ in range(args.queries):
            task = rng.choice(list(TASKS))
            query = RetrievalQuery(task=task, family=TASKS[task], code=kernel(rng, task),
                                   bottleneck=rng.choice(BOTTLENECKS).format(t=task))
            t = time.perf_counter()
            got = store.retrieve(query, args.k)
            latencies_ms.append((time.perf_counter() - t) * 1e3)
            assert len(got) == args.k, f"retrieved {len(got)} of {args.k}"
            same_family += sum(i.family == TASKS[task] for i in got)
            ideas_mmr += len({i.plan for i in got})
            ideas_plain += len({i.plan for i in plain.retrieve(query, args.k)})
            negatives += sum(i.polarity == "negative" for i in got)
        where = args.server or "embedded PersistentClient"
        # Relevance sanity: each family is 7-36% of the synthetic store, so a share far above that means
        # retrieval follows the query's task rather than returning arbitrary items.
        total = args.queries * args.k
        print("| store | embedding | items | bulk insert (items/s) | add 8 p50 ms | queries | k | p50 ms | p95 ms "
              "| mean ms | same family | negatives | distinct ideas MMR / top-k |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        print(f"| {where} | {store.embedder.spec} | {store.count()} | {len(bulk) / insert_s:,.0f} | "
              f"{statistics.median(round_ms):.1f} | "
              f"{args.queries} | {args.k} | {statistics.median(latencies_ms):.1f} | "
              f"{percentile(latencies_ms, 0.95):.1f} | {statistics.fmean(latencies_ms):.1f} | "
              f"{same_family / total:.0%} | {negatives / total:.0%} | "
              f"{ideas_mmr / args.queries:.1f} / {ideas_plain / args.queries:.1f} of {len(IDEAS)} |")


if __name__ == "__main__":
    main()
