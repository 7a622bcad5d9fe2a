"""A pre-warmed launcher for sandbox processes: import the simulator once, fork per evaluation.

Starting Python and importing NumPy plus the simulator costs more than most simulated evaluations,
so a long-lived server (`python -I -m accelopt_graph.tools.fork_server`) imports them once and
forks one child per evaluation. Isolation stays honest: the server never loads kernel code or
sees inputs and references (it only receives a working-directory path), and each child is a fresh
copy of that pristine server which starts its own session, swaps its standard streams for files,
closes every inherited descriptor (so a kernel cannot talk to the server) and then runs exactly
what a spawned sandbox runs (`sandbox_child.main`), confinement included.

Protocol (JSON lines): client -> server `{"id", "workdir", "env"}`; server -> client
`{"id", "pid"}` when forked and `{"pid", "returncode"}` when reaped.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
from typing import Any

PRELOAD = ("numpy", "accelopt_graph.tools.sandbox_child", "accelopt_graph.tools.trace_wire",
           "accelopt_graph.tools.confine", "accelopt_graph.tools.nkisim.interpreter",
           "accelopt_graph.tools.nkisim.frontend", "accelopt_graph.tools.nkisim.errors")
FORK_ENGINES = frozenset({"python", "nkisim"})


def _child(workdir: str, env: dict[str, str]) -> None:
    """In the forked child: detach, rewire fds, then run the sandbox program. Never returns."""
    code = 1
    try:
        os.setsid()
        os.chdir(workdir)
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(os.path.join(workdir, "stdout.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        err = os.open(os.path.join(workdir, "stderr.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        for fd, target in ((null, 0), (out, 1), (err, 2)):
            os.dup2(fd, target)
        os.closerange(3, 65536)  # the server's protocol pipes and anything else inherited
        sys.stdin = open(0, closefd=False)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = open(2, "w", closefd=False)
        os.environ.clear()
        os.environ.update(env)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        from accelopt_graph.tools import sandbox_child

        code = sandbox_child.main(workdir)
    except BaseException:  # noqa: BLE001 - report and exit; never return into the server loop
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


_PR_SET_CHILD_SUBREAPER = 36


def _kill_strays(known: set[int]) -> None:
    """Kill every child of this server it did not fork itself: orphans of a finished sandbox."""
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in known:
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = f.read().rsplit(")", 1)[1].split()[1]
        except (OSError, IndexError):
            continue
        if ppid == me:
            try:
                os.kill(int(entry), signal.SIGKILL)
            except ProcessLookupError:
                pass


def serve() -> None:
    """The server loop: fork on each request, report exits; ends when stdin closes."""
    import ctypes
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a warm-up only: the child imports it again and
            pass  # reports the failure as SandboxFailure for the evaluation that needs it
    # Orphans of a sandbox (a kernel that forked, when seccomp is off) become our children, so
    # they can be found and killed instead of escaping to init.
    ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    known: set[int] = set()
    stdout = sys.stdout.buffer
    pending = b""  # raw reads: several requests may arrive in one chunk

    def send(msg: dict) -> None:
        stdout.write((json.dumps(msg) + "\n").encode())
        stdout.flush()

    send({"ready": True})
    while True:
        readable, _, _ = select.select([0], [], [], 0.05)
        while True:  # reap every finished child
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid in known:
                known.discard(pid)
                _kill_strays(known)
                send({"pid": pid, "returncode": os.waitstatus_to_exitcode(status)})
        if not readable:
            continue
        chunk = os.read(0, 1 << 16)
        if not chunk:
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                _child(request["workdir"], request["env"])
            known.add(pid)
            send({"id": request["id"], "pid": pid})


class ForkServer:
    """Client side: one server process shared by every thread of this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._waiting: dict[str, dict[str, Any]] = {}  # request id -> {"pid", "event", "rc"}
        self._by_pid: dict[int, dict[str, Any]] = {}
        self._early_exits: dict[int, int] = {}

    def _start(self) -> subprocess.Popen:
        from accelopt_graph.tools.sandbox import _THREAD_ENV

        env = {k: os.environ[k] for k in ("PATH", "LANG", "HOME") if k in os.environ}
        proc = subprocess.Popen([sys.executable, "-I", "-m", "accelopt_graph.tools.fork_server"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                env={**env, **_THREAD_ENV}, start_new_session=True)
        ready = proc.stdout.readline()
        if json.loads(ready or b"{}").get("ready") is not True:
            raise RuntimeError("sandbox fork server failed to start")
        threading.Thread(target=self._read, args=(proc,), daemon=True).start()
        return proc

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            msg = json.loads(line)
            with self._lock:
                if "id" in msg:
                    slot = self._waiting.pop(msg["id"])
                    slot["pid"] = msg["pid"]
                    self._by_pid[msg["pid"]] = slot
                    if msg["pid"] in self._early_exits:
                        slot["rc"] = self._early_exits.pop(msg["pid"])
                        self._by_pid.pop(msg["pid"])
                        slot["exited"].set()
                    slot["forked"].set()
                elif msg["pid"] in self._by_pid:
                    slot = self._by_pid.pop(msg["pid"])
                    slot["rc"] = msg["returncode"]
                    slot["exited"].set()
                else:
                    self._early_exits[msg["pid"]] = msg["returncode"]
        with self._lock:  # the server died: wake everyone; run_isolated reports it
            for slot in list(self._waiting.values()) + list(self._by_pid.values()):
                slot.setdefault("rc", None)
                slot["forked"].set()
                slot["exited"].set()
            self._waiting.clear()
            self._by_pid.clear()

    def launch(self, request_id: str, workdir: str, env: dict[str, str]) -> dict[str, Any]:
        """Fork a sandbox for `workdir`; return its slot (`pid`, `exited` event, `rc`)."""
        slot: dict[str, Any] = {"forked": threading.Event(), "exited": threading.Event()}
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._proc = self._start()
            self._waiting[request_id] = slot
            self._proc.stdin.write((json.dumps({"id": request_id, "workdir": workdir,
                                                "env": env}) + "\n").encode())
            self._proc.stdin.flush()
        if not slot["forked"].wait(timeout=120) or slot.get("pid") is None:
            raise RuntimeError("sandbox fork server exited unexpectedly")
        return slot

    def close(self) -> None:
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                self._proc.stdin.close()
                self._proc.wait(timeout=10)
            self._proc = None


_SERVER: ForkServer | None = None
_SERVER_LOCK = threading.Lock()


def shared_server() -> ForkServer:
    """The process-wide fork server, started on first use."""
    global _SERVER
    with _SERVER_LOCK:
        if _SERVER is None:
            _SERVER = ForkServer()
        return _SERVER


if __name__ == "__main__":
    serve()
