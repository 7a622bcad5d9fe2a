"""Test doubles for graph runs: a chat model whose reply is chosen by a marker in the prompt (so
`Send` fan-out order does not matter), and an in-process backend for pure graph logic."""
from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from accelopt_graph.tools.backend import EvalResult, EvalSettings, EvalStatus, KernelTask, normalized_code_hash

Reply = str | Callable[[str], str]


def prompt_text(messages: Sequence[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


class ScriptedChatModel(BaseChatModel):
    """Reply with the first rule whose marker (substring or compiled regex) occurs in the prompt.

    Every call is recorded (`calls`: the prompt text), and a usage block is attached so the ledger
    has tokens to count: prompt tokens = words in the prompt, completion tokens = words in the reply.
    """

    rules: list[tuple[Any, Reply]]
    default: Reply | None = None
    name_: str = "scripted"
    _calls: list[str] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def model_name(self) -> str:
        return self.name_

    @property
    def calls(self) -> list[str]:
        with self._lock:
            return list(self._calls)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        text = prompt_text(messages)
        with self._lock:
            self._calls.append(text)
        reply = self._reply(text)
        usage = {"input_tokens": len(text.split()), "output_tokens": len(reply.split()),
                 "total_tokens": len(text.split()) + len(reply.split())}
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply, usage_metadata=usage))])

    def _reply(self, text: str) -> str:
        for marker, reply in self.rules:
            hit = marker.search(text) if isinstance(marker, re.Pattern) else marker in text
            if hit:
                return reply(text) if callable(reply) else reply
        if self.default is None:
            raise LookupError(f"ScriptedChatModel {self.name_!r}: no rule matches the prompt:\n{text[:2000]}")
        return self.default(text) if callable(self.default) else self.default


class MarkerBackend:
    """An in-process backend for graph-logic tests only: a kernel's latency is its `LATENCY_MS = x`
    marker; `# BROKEN` compiles to a compile error. Never executes code."""

    name = "nkisim"

    def __init__(self) -> None:
        self.evaluated: list[str] = []
        self._lock = threading.Lock()

    def evaluate(self, task: KernelTask, code: str, settings: EvalSettings) -> EvalResult:
        with self._lock:
            self.evaluated.append(code)
        digest = normalized_code_hash(code)
        if "# BROKEN" in code:
            return EvalResult(status=EvalStatus.COMPILE_ERROR, error="SyntaxError: marker says broken", code_hash=digest)
        match = re.search(r"LATENCY_MS = ([0-9.]+)", code)
        if not match:
            return EvalResult(status=EvalStatus.RUNTIME_ERROR, error="no latency marker", code_hash=digest)
        latency = float(match.group(1))
        peak = task.peak_latency_ms(settings.hardware)
        return EvalResult(status=EvalStatus.OK, latency_ms=latency, percent_of_peak=100.0 * peak / latency,
                          peak_latency_ms=peak, code_hash=digest, counters={"dma_active_time_percent": 0.5})

    def hardware_info(self, hardware: str) -> dict:
        return {"knowledge_pack": "nki"}
