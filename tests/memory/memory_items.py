"""Hand-made experiences for the memory tests (a uniquely named helper module, not a conftest,
so it cannot clash with other rooms' test helpers)."""
from datetime import datetime, timedelta, timezone

from accelopt_graph.memory.experience import Experience, Provenance

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)

KERNELS = {
    "matmul": "def matmul(a, b, out):\n    t = nl.load(a[i_p, i_f])\n"
              "    acc = nl.matmul(t, nl.load(b), transpose_x=True)\n    nl.store(out, acc)\n",
    "rmsnorm": "def rmsnorm(x, w, out):\n    t = nl.load(x)\n    ms = nl.mean(nl.square(t), axis=1)\n"
               "    nl.store(out, nl.multiply(t, nl.rsqrt(ms)))\n",
    "silu": "def silu(x, out):\n    t = nl.load(x)\n    nl.store(out, nl.multiply(t, nl.sigmoid(t)))\n",
}


def make_experience(task="matmul", *, speedup=1.3, i=0, run="run-a", parent="p0", plan="plan0",
                    hardware="trn1", backend="nkisim", title=None, description=None, minutes=0):
    family = {"matmul": "matmul", "bmm": "matmul", "rmsnorm": "normalization", "silu": "elementwise"}[task]
    code = KERNELS.get(task, KERNELS["matmul"])
    return Experience(
        slow_code=code, fast_code=code.replace("nl.load", "nl.load_transpose2d"), speedup=speedup,
        polarity="positive" if speedup > 1 else "negative",
        title=title or f"{task} rewrite {i}",
        description=description or f"Keep the stationary {family} operand resident in SBUF to cut HBM traffic ({i}).",
        snippet_before="t = nl.load(a)", snippet_after="t = nl.load_transpose2d(a)", plan=f"plan text {i}",
        task=task, family=family, hardware=hardware, backend=backend,
        provenance=Provenance(run_id=run, iteration=i, parent_id=parent, plan_id=plan, sample_id=f"s{i}",
                              models={"summarizer": "fake-model"}),
        created_at=T0 + timedelta(minutes=minutes or i))
