"""Fixtures of the graph-edge tests: the fake OpenAI server, run configs, a `langgraph dev` server."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from .fake_openai import FakeOpenAIServer, Rule

REPO = Path(__file__).resolve().parents[2]
ROLES = ("planner", "executor", "summarizer", "fixer")
FAKE_MODEL = "fake-gpt"
# USD per million tokens for the fake model: nonzero so the ledger's prices are exercised.
FAKE_PRICE = {"input_per_mtok": 1.5, "output_per_mtok": 6.0}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def fake_openai() -> Iterator[Any]:
    """Factory: `fake_openai(rules, **options)` starts a server that is stopped after the test."""
    servers: list[FakeOpenAIServer] = []

    def start(rules: list[Rule], **options: Any) -> FakeOpenAIServer:
        server = FakeOpenAIServer(rules=list(rules), **options).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def run_config(tmp_path: Path, base_url: str, **sections: Any) -> dict[str, Any]:
    """Return a run config whose models all use `base_url`; `sections` deep-override it."""
    config: dict[str, Any] = {
        "models": {role: {"base_url": base_url, "model": FAKE_MODEL, "api_key_env": "FAKE_OPENAI_KEY",
                          "max_retries": 0, "timeout_s": 60} for role in ROLES},
        "prices": {FAKE_MODEL: FAKE_PRICE},
        "memory": {"path": str(tmp_path / "memory")},
        "run": {"run_dir": str(tmp_path / "runs")},
    }
    for name, values in sections.items():
        config[name] = {**config.get(name, {}), **values}
    return config


def write_config(path: Path, config: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@contextmanager
def langgraph_dev(cwd: Path, env: dict[str, str], *, startup_s: float = 120.0) -> Iterator[str]:
    """Run `langgraph dev` (in-memory server) on a free port; yield its URL; always stop it.

    `--allow-blocking`: the evaluation backend blocks for a free device slot and the caches are
    SQLite, which the dev server's blocking-call detector would otherwise reject.
    """
    port = free_port()
    log = open(cwd / "langgraph-dev.log", "w")
    process = subprocess.Popen(
        ["langgraph", "dev", "--no-browser", "--no-reload", "--allow-blocking", "--port", str(port),
         "--config", str(REPO / "langgraph.json")],
        cwd=cwd, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + startup_s
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"langgraph dev exited with {process.returncode}:\n"
                                   + (cwd / "langgraph-dev.log").read_text()[-3000:])
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"langgraph dev did not answer /ok within {startup_s} s")
            time.sleep(0.5)
        yield url
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=15)
        log.close()
