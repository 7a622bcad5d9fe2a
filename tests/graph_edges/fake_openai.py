"""A local OpenAI-compatible chat server for tests: scripted replies, exact usage, call log.

Replies are a pure function of the prompt (the first rule whose `match` substring occurs in the
request's messages wins), so concurrent `Send` branches get deterministic answers. Every response
carries a `usage` block with `completion_tokens_details.reasoning_tokens`, computed from the text,
and the server remembers it so a test can compare the cost ledger against what was "billed".

`hold_after=n` parks every request after the n-th (`hold_if(index, prompt)` parks the ones it
selects) until `release()`, `drop_parked()` or `stop()`: a test uses that as the point where it
SIGKILLs the client, knowing exactly which calls had finished.
Run standalone with `python tests/graph_edges/fake_openai.py --script rules.json --port 8123`.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable


@dataclass(frozen=True)
class Rule:
    """Answer `reply` to a request whose messages contain `match` (every string of it, for a list).

    `reply` may be a function of the prompt text for in-process servers; rules read from a file
    are plain strings.
    """

    match: str | list[str]
    reply: str | Callable[[str], str]
    reasoning_tokens: int | None = None

    def matches(self, text: str) -> bool:
        return all(m in text for m in ([self.match] if isinstance(self.match, str) else self.match))

    def text(self, prompt: str) -> str:
        return self.reply(prompt) if callable(self.reply) else self.reply


@dataclass
class CallRecord:
    index: int
    model: str
    prompt_sha: str
    rule: int  # index of the rule that answered, -1 for the default
    usage: dict[str, Any]
    finished: bool = False  # the response was written completely to the socket
    status: int = 200
    prompt: str = ""


def load_rules(path: str | Path) -> list[Rule]:
    """Read rules from a JSON file: a list of {"match", "reply", "reasoning_tokens"?} objects."""
    raw = json.loads(Path(path).read_text())
    if not isinstance(raw, list):
        raise ValueError(f"{path}: expected a JSON list of rules, got {type(raw).__name__}")
    return [Rule(**item) for item in raw]


def count_tokens(text: str) -> int:
    """Whitespace word count: deterministic, cheap, and good enough to be 'the server's' count."""
    return len(text.split())


def _messages_text(messages: list[dict[str, Any]]) -> str:
    parts = []
    for message in messages:
        content = message.get("content", "")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        parts.append(f"{message.get('role', '')}: {content}")
    return "\n".join(parts)


@dataclass
class FakeOpenAIServer:
    """Threaded HTTP server speaking the subset of the OpenAI chat API that langchain-openai uses."""

    rules: list[Rule]
    default_reply: str = "I have no suggestion."
    host: str = "127.0.0.1"
    port: int = 0
    delay_s: float = 0.0
    hold_after: int | None = None
    hold_if: Callable[[int, str], bool] | None = None
    fail_statuses: list[int] = field(default_factory=list)  # served (in order) before any success
    calls: list[CallRecord] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._gate = threading.Event()
        self._stopping = threading.Event()
        self._generation = 0  # bumped by drop_parked(): requests parked before it get no answer
        self.parked = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send_json(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
                else:
                    self._send_json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send_json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                server._serve_chat(self, body)

            def _send_json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

        self._httpd = ThreadingHTTPServer((self.host, self.port), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._gate.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def release(self) -> None:
        """Let parked requests through and stop parking new ones."""
        self.hold_after = self.hold_if = None
        self._gate.set()

    def drop_parked(self) -> None:
        """Abandon parked requests (their client is gone) and answer new ones normally."""
        with self._lock:
            self._generation += 1
            self.hold_after = self.hold_if = None
        self._gate.set()

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self, text: str) -> tuple[int, Rule]:
        for i, rule in enumerate(self.rules):
            if rule.matches(text):
                return i, rule
        return -1, Rule(match="", reply=self.default_reply)

    def finished_calls(self) -> list[CallRecord]:
        with self._lock:
            return [c for c in self.calls if c.finished]

    def wait_for_parked(self, timeout_s: float) -> bool:
        """Wait until a request is parked at the hold point; True if one is."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                if self.parked:
                    return True
            time.sleep(0.02)
        return False

    def _serve_chat(self, handler: Any, body: dict[str, Any]) -> None:
        text = _messages_text(body.get("messages", []))
        rule_index, rule = self.answer(text)
        reply = rule.text(text)
        prompt_tokens = count_tokens(text)
        reasoning = rule.reasoning_tokens
        if reasoning is None:
            reasoning = 3 + int(hashlib.sha256(text.encode()).hexdigest()[:4], 16) % 40
        completion = count_tokens(reply) + reasoning
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion,
            "completion_tokens_details": {"reasoning_tokens": reasoning},
            "prompt_tokens_details": {"cached_tokens": 0},
        }
        with self._lock:
            record = CallRecord(index=len(self.calls) + 1, model=str(body.get("model", "")),
                                prompt_sha=hashlib.sha256(text.encode()).hexdigest()[:16],
                                rule=rule_index, usage=usage, prompt=text)
            self.calls.append(record)
            status = self.fail_statuses.pop(0) if self.fail_statuses else 200
            record.status = status
            parked = ((self.hold_after is not None and record.index > self.hold_after)
                      or (self.hold_if is not None and self.hold_if(record.index, text)))
            self.parked += parked
            generation = self._generation
        if parked:
            self._gate.wait()
            if self._stopping.is_set() or generation != self._generation:
                return
        if self.delay_s:
            time.sleep(self.delay_s)
        if status != 200:
            handler._send_json(status, {"error": {"message": f"scripted failure {status}",
                                                  "type": "server_error"}})
            return
        completion_id = f"chatcmpl-{record.index}"
        try:
            if body.get("stream"):
                self._stream(handler, body, completion_id, reply, usage)
            else:
                handler._send_json(200, {
                    "id": completion_id, "object": "chat.completion", "created": int(time.time()),
                    "model": record.model,
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": reply}}],
                    "usage": usage,
                })
        except (BrokenPipeError, ConnectionResetError):
            return
        with self._lock:
            record.finished = True

    @staticmethod
    def _stream(handler: Any, body: dict[str, Any], completion_id: str, reply: str,
                usage: dict[str, Any]) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Connection", "close")
        handler.end_headers()
        base = {"id": completion_id, "object": "chat.completion.chunk", "created": int(time.time()),
                "model": body.get("model", "")}
        chunks = [
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": reply},
                                  "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append({**base, "choices": [], "usage": usage})
        for chunk in chunks:
            handler.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
        handler.close_connection = True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", required=True, help="JSON list of {match, reply} rules")
    parser.add_argument("--port", type=int, default=8123)
    args = parser.parse_args()
    server = FakeOpenAIServer(rules=load_rules(args.script), port=args.port).start()
    print(f"serving {server.base_url}", flush=True)
    try:
        threading.Event().wait()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
