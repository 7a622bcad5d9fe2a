"""Evaluating a kernel through the injected backend, behind the run's evaluation cache."""
from __future__ import annotations

import asyncio

from accelopt_graph.context import OptimizerContext
from accelopt_graph.eval_cache import code_hash
from accelopt_graph.tools.backend import EvalResult, EvalStatus


async def evaluate_code(ctx: OptimizerContext, code: str) -> tuple[EvalResult, bool]:
    """Return (result, from_cache). The backend blocks for a device slot, so it runs in a thread;
    a backend exception (a bug on the trusted side) becomes `bench_error` and the run goes on."""
    settings = ctx.eval_settings
    cached = ctx.eval_cache.get(ctx.task, code, settings)
    if cached is not None:
        return cached, True
    stop = ctx.ledger.stop_reason()
    if stop is not None:
        return EvalResult(status=EvalStatus.BENCH_ERROR, error=f"skipped: {stop}",
                          code_hash=code_hash(code), backend=settings.backend,
                          hardware=settings.hardware), False
    try:
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(ctx.eval_threads, ctx.backend.evaluate, ctx.task, code, settings)
    except Exception as err:  # noqa: BLE001 - the run must survive a backend failure
        result = EvalResult(status=EvalStatus.BENCH_ERROR, error=f"{type(err).__name__}: {err}"[-4000:],
                            code_hash=code_hash(code), backend=settings.backend,
                            hardware=settings.hardware)
    else:
        ctx.eval_cache.put(ctx.task, code, settings, result)
    ctx.ledger.add_evaluation()
    return result, False
