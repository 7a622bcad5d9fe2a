"""Chat models per role (langchain-openai against any OpenAI-compatible endpoint), the call wrapper
that retries, prices and records every call, and the run's persistent LLM response cache.

A failed call (rate limit, 5xx, timeout, malformed answer after the retries) is returned as a failed
`LLMCall`; it never raises into the graph, so one bad call costs one sample, not the run.
"""
from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from accelopt_graph.kvstore import KeyValueTable
from accelopt_graph.settings import ModelSettings, Settings
from accelopt_graph.types import ROLES, LLMCall, Role, short_hash

if TYPE_CHECKING:
    from accelopt_graph.context import OptimizerContext

T = TypeVar("T")


class NoEndpointConfigured(RuntimeError):
    """A role has no endpoint; the message says how to configure one."""


def make_chat_model(role: str, settings: ModelSettings) -> BaseChatModel:
    """Build the ChatOpenAI client for one role from its settings."""
    if not settings.base_url or not settings.model:
        raise NoEndpointConfigured(
            f"No LLM endpoint configured for the {role} (models.{role}.base_url and models.{role}.model). "
            "Set them in your config (see configs/vllm.yaml or configs/openai.yaml), e.g.\n"
            f"  models:\n    {role}:\n      base_url: http://localhost:8000/v1\n      model: openai/gpt-oss-120b\n"
            f"and export the API key in ${settings.api_key_env} (any value for a local vLLM server)."
        )
    from langchain_openai import ChatOpenAI

    kwargs: dict[str, Any] = dict(settings.kwargs)
    if settings.reasoning_effort is not None:
        kwargs["reasoning_effort"] = settings.reasoning_effort
    if settings.max_tokens is not None:
        kwargs["max_tokens"] = settings.max_tokens
    if settings.temperature is not None:
        kwargs["temperature"] = settings.temperature
    return ChatOpenAI(
        model=settings.model,
        base_url=settings.base_url,
        api_key=os.environ.get(settings.api_key_env) or "EMPTY",
        timeout=settings.timeout_s,
        max_retries=settings.max_retries,
        **kwargs,
    )


def make_models(settings: Settings) -> dict[str, BaseChatModel]:
    """Build one chat model per role; raises NoEndpointConfigured naming the first unconfigured role."""
    return {role: make_chat_model(role, settings.models.for_role(role)) for role in ROLES}


def model_name(model: BaseChatModel, settings: ModelSettings | None = None) -> str:
    """Return the model's name as used in the price table."""
    if settings is not None and settings.model:
        return settings.model
    for attr in ("model_name", "model"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


@dataclass(frozen=True)
class CachedReply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    reasoning_tokens: int
    latency_s: float
    model: str


class LLMCache:
    """Finished LLM calls keyed by (role, model, prompt, call key), in SQLite in the run directory.

    The call key names the call's place in the search (candidate, plan, sample, attempt), so K
    samples of one prompt stay distinct while a resumed run replays each finished call for free.
    """

    def __init__(self, path: str | Path | None) -> None:
        self._table = KeyValueTable(path, "replies")
        self.path = self._table.path

    @staticmethod
    def key(role: str, model: str, messages: Sequence[BaseMessage], call_key: str) -> str:
        payload = json.dumps([role, model, call_key, [(m.type, m.content) for m in messages]])
        return short_hash(payload, length=32)

    def get(self, key: str) -> CachedReply | None:
        value = self._table.get(key)
        return CachedReply(**json.loads(value)) if value is not None else None

    def put(self, key: str, reply: CachedReply) -> None:
        self._table.put(key, json.dumps(reply.__dict__))

    def __len__(self) -> int:
        return len(self._table)

    def close(self) -> None:
        self._table.close()


def usage_of(message: AIMessage) -> tuple[int, int, int]:
    """Return (prompt, completion, reasoning) tokens from a response's usage metadata (0 if absent)."""
    usage = getattr(message, "usage_metadata", None) or {}
    details = usage.get("output_token_details") or {}
    return (int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0)),
            int(details.get("reasoning", 0) or 0))


def messages_for(system: str, user: str) -> list[BaseMessage]:
    return [SystemMessage(content=system), HumanMessage(content=user)]


@dataclass(frozen=True)
class CallOutcome:
    """What a role call produced: the parsed value (None on failure), the raw text and its ledger rows."""

    value: Any
    text: str
    calls: tuple[LLMCall, ...]
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.value is not None


async def call_role(ctx: OptimizerContext, role: Role, messages: Sequence[BaseMessage], *,
                    call_key: str, iteration: int, parse: Callable[[str], T | None]) -> CallOutcome:
    """Call `role`'s model, parse its answer, retry with backoff on errors and malformed answers.

    Every attempt is priced and returned as an `LLMCall` (and sent to the ledger sink and the stream);
    cached attempts replay the recorded usage without calling the model.
    """
    search = ctx.settings.search
    model = ctx.models[role]
    name = model_name(model, ctx.settings.models.for_role(role))
    calls: list[LLMCall] = []
    text, error = "", ""
    transport_tries = 0
    malformed_tries = 0
    attempt = 0
    while True:
        attempt += 1
        stop = ctx.ledger.stop_reason()
        if stop is not None:
            return CallOutcome(None, text, tuple(calls), error=f"skipped: {stop}")
        # Keyed by answers so far, not attempts: a transport failure caches nothing, so a resumed
        # run finds the answer that followed it under the same key.
        key = LLMCache.key(role, name, messages, f"{call_key}#{malformed_tries}")
        reply = ctx.llm_cache.get(key)
        cached = reply is not None
        if reply is None:
            try:
                reply = await _invoke(ctx, model, messages, name)
            except Exception as err:  # noqa: BLE001 - any client failure becomes a failed call
                error = f"{type(err).__name__}: {err}"[-2000:]
                call = LLMCall(role=role, model=name, iteration=iteration, ok=False, error=error,
                               call_key=call_key, attempts=attempt)
                _record(ctx, call)
                calls.append(call)
                transport_tries += 1
                if transport_tries > search.llm_retries:
                    return CallOutcome(None, text, tuple(calls), error=error)
                await asyncio.sleep(search.retry_backoff_s * 2 ** (transport_tries - 1))
                continue
            ctx.llm_cache.put(key, reply)
        text = reply.text
        value = parse(text)
        usd = ctx.settings.price_usd(reply.model, prompt_tokens=reply.prompt_tokens,
                                     completion_tokens=reply.completion_tokens)
        call = LLMCall(role=role, model=reply.model, iteration=iteration, prompt_tokens=reply.prompt_tokens,
                       completion_tokens=reply.completion_tokens, reasoning_tokens=reply.reasoning_tokens,
                       latency_s=reply.latency_s, usd=usd, ok=value is not None,
                       error="" if value is not None else "malformed answer", cached=cached,
                       call_key=call_key, attempts=attempt)
        _record(ctx, call)
        calls.append(call)
        if value is not None:
            return CallOutcome(value, text, tuple(calls))
        malformed_tries += 1
        error = "malformed answer"
        if malformed_tries > search.malformed_retries:
            return CallOutcome(None, text, tuple(calls), error=error)


async def _invoke(ctx: OptimizerContext, model: BaseChatModel, messages: Sequence[BaseMessage],
                  name: str) -> CachedReply:
    async with ctx.llm_semaphore:
        start = time.monotonic()
        message = await model.ainvoke(list(messages))
        latency = time.monotonic() - start
    prompt, completion, reasoning = usage_of(message)
    return CachedReply(text=str(message.text),
                       prompt_tokens=prompt, completion_tokens=completion, reasoning_tokens=reasoning,
                       latency_s=latency, model=name)


def _record(ctx: OptimizerContext, call: LLMCall) -> None:
    ctx.ledger.add_call(call)
    ctx.emit({"event": "llm_call", "iteration": call.iteration, "role": call.role, "model": call.model,
              "ok": call.ok, "cached": call.cached, "usd": call.usd, "usd_total": ctx.ledger.spent.usd})
