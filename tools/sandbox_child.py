"""The process that runs one untrusted kernel: `python -I -m accelopt_graph.tools.sandbox_child DIR`.

It reads `DIR/job.json` and the inputs (.npy, no pickles), imports its engine, confines itself
(tools/confine.py), loads `DIR/kernel.py` and runs it on every case, writing the outputs, its view of
the inputs after the run and, for the timed case, the instruction trace. It never sees reference
outputs, and the trusted side re-checks everything it writes. Imports stay light (no pydantic,
langchain or chromadb): start-up is part of every evaluation's overhead.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ERROR_TAIL_CHARS = 4000


class PythonEngine:
    """Plain Python/NumPy kernels: no trace. Used to test the sandbox itself."""

    compile_errors: tuple[type[BaseException], ...] = (SyntaxError,)

    def prepare(self) -> None:
        pass

    def load(self, path: Path, name: str) -> Callable:
        source = path.read_text()
        namespace: dict[str, Any] = {"__name__": "candidate_kernel", "__file__": str(path)}
        exec(compile(source, str(path), "exec"), namespace)  # noqa: S102 - this IS the sandbox
        if name not in namespace:
            raise NameError(f"kernel file defines no function named {name!r}")
        return namespace[name]

    def run(self, kernel: Callable, inputs: list, *, trace: bool) -> tuple[list, list | None]:
        return _as_list(kernel(*inputs)), None


class NkisimEngine:
    """Kernels written against `neuronxcc.nki`, run by the project's CPU simulator."""

    def prepare(self) -> None:
        from accelopt_graph.tools.nkisim import errors, frontend, interpreter

        self.interpreter = interpreter
        self.frontend = frontend
        self.compile_errors = (SyntaxError, errors.SimCompileError)
        self.hardware = os.environ.get("ACCELOPT_HARDWARE", "trn1")

    def load(self, path: Path, name: str) -> Callable:
        module = self.frontend.load_module(path)
        if not hasattr(module, name):
            raise NameError(f"kernel file defines no function named {name!r}")
        return getattr(module, name)

    def run(self, kernel: Callable, inputs: list, *, trace: bool) -> tuple[list, list | None]:
        from accelopt_graph.tools.trace_wire import encode_trace

        # The timed run is strict about affine_range: the performance model overlaps its
        # iterations, so a loop-carried dependency there would make a kernel look faster than it is.
        outputs, events = self.interpreter.run_kernel(kernel, list(inputs), collect_trace=trace,
                                                      hardware=self.hardware, strict_affine=trace)
        return _as_list(outputs), (encode_trace(list(events)) if trace else None)


ENGINES: dict[str, str] = {
    "python": "accelopt_graph.tools.sandbox_child:PythonEngine",
    "nkisim": "accelopt_graph.tools.sandbox_child:NkisimEngine",
    "neuron": "accelopt_graph.tools.neuron:NeuronChildEngine",
}


def _as_list(result: Any) -> list:
    items = list(result) if isinstance(result, (tuple, list)) else [result]
    return [np.asarray(x) for x in items]


def _load_engine(name: str):
    module_name, attr = ENGINES[name].split(":")
    return getattr(importlib.import_module(module_name), attr)()


def _tail(text: str) -> str:
    return text[-ERROR_TAIL_CHARS:]


def _error_text(exc: BaseException, kernel_file: str) -> str:
    """The traceback frames in the kernel file plus the exception: what an LLM can act on."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == kernel_file]
    lines = traceback.format_list(frames[-5:]) + traceback.format_exception_only(exc)
    # The temporary path differs per run; the LLM (and result comparison) needs the stable name.
    return _tail("".join(lines).replace(kernel_file, "kernel.py"))


def _load_inputs(workdir: Path, names: list[dict]) -> list:
    values = []
    for spec in names:
        arr = np.load(workdir / spec["file"], allow_pickle=False)
        values.append(arr.item() if spec.get("scalar") else arr)
    return values


def array_digest(value: Any) -> str:
    """Digest of an array's dtype, shape and bytes (also used by the trusted side to compare)."""
    arr = np.asarray(value)
    h = hashlib.blake2b(f"{arr.dtype.str}{arr.shape}".encode(), digest_size=20)
    h.update(np.ascontiguousarray(arr).reshape(-1).view(np.uint8))  # ascontiguous makes 0-d 1-d
    return h.hexdigest()


def _save(path: Path, value: Any) -> None:
    arr = np.asarray(value)
    # np.ascontiguousarray turns a 0-d scalar (a task's eps) into shape (1,); keep 0-d as is.
    np.save(path, arr if arr.ndim == 0 else np.ascontiguousarray(arr), allow_pickle=False)


def main(workdir_arg: str) -> int:
    workdir = Path(workdir_arg).resolve()
    job = json.loads((workdir / "job.json").read_text())
    (workdir / "out").mkdir(exist_ok=True)
    report: dict[str, Any] = {"cases": [], "confinement": {}}
    try:  # before any kernel code exists in this process: a failure here is ours, not the kernel's
        engine = _load_engine(job["engine"])
        engine.prepare()
    except Exception:  # noqa: BLE001
        report["internal"] = _tail(traceback.format_exc())
        _write_report(workdir, report)
        return 0
    if job["confinement"] != "none":
        from accelopt_graph.tools import confine

        from accelopt_graph import tools as _tools

        # The nkibench folder (oracle caches) is deliberately not readable from here.
        package_files = [sys.modules["accelopt_graph"].__file__, _tools.__file__]
        report["confinement"] = confine.confine(
            level=job["confinement"], workdir=str(workdir), package_files=package_files,
            **job["limits"])
    kernel_file = str(workdir / "kernel.py")
    try:
        kernel = engine.load(Path(kernel_file), job["kernel_name"])
    except engine.compile_errors as exc:
        report["load"] = {"status": "compile_error", "error": _error_text(exc, kernel_file)}
    except BaseException as exc:  # noqa: BLE001 - any failure of untrusted code is a status
        report["load"] = {"status": "runtime_error", "error": _error_text(exc, kernel_file)}
    if "load" in report:
        _write_report(workdir, report)
        return 0
    for index, case in enumerate(job["cases"]):
        entry: dict[str, Any] = {"status": "ok", "error": "", "n_outputs": 0}
        inputs = []
        try:
            # one case's inputs at a time: full-size tasks hold GiBs per case
            inputs = _load_inputs(workdir, case["inputs"])
            outputs, trace = engine.run(kernel, inputs, trace=bool(case.get("trace")))
            try:
                for j, out in enumerate(outputs):
                    _save(workdir / "out" / f"c{index}_o{j}.npy", out)
                if trace is not None:
                    (workdir / "out" / f"c{index}_trace.json").write_text(json.dumps(trace))
            except OSError as exc:  # RLIMIT_FSIZE: Python ignores SIGXFSZ, so writes fail instead
                limit = job["limits"]["file_limit_mb"] if job["confinement"] != "none" else "?"
                raise OSError(f"could not write the kernel's outputs or trace ({exc}); the "
                              f"sandbox's output limit is {limit} MiB per file") from None
            entry["n_outputs"] = len(outputs)
            outputs = trace = None  # saved: free before the next case's inputs arrive
        except engine.compile_errors as exc:
            entry = {"status": "compile_error", "error": _error_text(exc, kernel_file)}
        except BaseException as exc:  # noqa: BLE001
            entry = {"status": "runtime_error", "error": _error_text(exc, kernel_file)}
            if isinstance(exc, MemoryError) and job["confinement"] == "strict":
                entry["error"] += (f"(the sandbox's memory limit is "
                                   f"{job['limits']['memory_limit_mb']} MiB)\n")
        entry["input_digests"] = [array_digest(value) for value in inputs]
        report["cases"].append(entry)
        del inputs
        if entry["status"] != "ok":
            break
    _write_report(workdir, report)
    return 0


def _write_report(workdir: Path, report: dict) -> None:
    (workdir / "out" / "report.json").write_text(json.dumps(report))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
