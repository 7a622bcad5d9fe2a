"""Evaluating a kernel through the injected backend, behind the run's evaluation cache."""
from __future__ import annotations

import asyncio

from accelopt_graph.context import OptimizerContext
from accelopt_graph.eval_cache import cache_key, code_hash
from accelopt_graph.tools.backend import EvalResult, EvalStatus


async def evaluate_code(ctx: OptimizerContext, code: str) -> tuple[EvalResult, bool]:
    """Return (result, from_cache). Identical code evaluated concurrently is evaluated once (the others
    await it); the backend blocks for a device slot, so it runs in the context's evaluation threads;
    a backend exception (a bug on the trusted side) becomes `bench_error` and the run goes on."""
    settings = ctx.eval_settings
    cached = ctx.eval_cache.get(ctx.task, code, settings)
    if cached is not None:
        return cached, True
    key = cache_key(ctx.task, code, settings)
    pending = ctx.evaluations_in_flight.get(key)
    if pending is not None:
        return await asyncio.shield(pending), True
    future = asyncio.get_running_loop().create_future()
    ctx.evaluations_in_flight[key] = future
    try:
        result = await _evaluate(ctx, code)
        future.set_result(result)
    except BaseException as err:
        future.set_exception(err)
        raise
    finally:
        ctx.evaluations_in_flight.pop(key, None)
    return result, False


async def _evaluate(ctx: OptimizerContext, code: str) -> EvalResult:
    settings = ctx.eval_settings
    stop = ctx.ledger.stop_reason()
    if stop is not None:
        return EvalResult(status=EvalStatus.BENCH_ERROR, error=f"skipped: {stop}", code_hash=code_hash(code),
                          backend=settings.backend, hardware=settings.hardware)
    try:
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(ctx.eval_threads, ctx.backend.evaluate, ctx.task, code, settings)
    except Exception as err:  # noqa: BLE001 - the run must survive a backend failure
        result = EvalResult(status=EvalStatus.BENCH_ERROR, error=f"{type(err).__name__}: {err}"[-4000:],
                            code_hash=code_hash(code), backend=settings.backend, hardware=settings.hardware)
    else:
        ctx.eval_cache.put(ctx.task, code, settings, result)
    ctx.ledger.add_evaluation()
    return result
