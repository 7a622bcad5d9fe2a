"""`neuron`: the real Trainium backend, measured as the AccelOpt paper measured (trainium.md §3.1, §5).

The only module that imports `neuronxcc`. A kernel is compiled and run with the legacy
`nki.baremetal` inside a sandbox process pinned to one NeuronCore (NEURON_RT_VISIBLE_CORES),
compiled with NEURON_CC_FLAGS=--auto-cast=none and AccelOpt's options, saving the NEFF and NTFF.
Timing and counters come from the trusted side: the worker re-executes the NEFF with
`neuron-profile capture` and reads `neuron-profile view --output-format summary-json`, following
the paper's protocol (2 warm-up, 10 timed, repeat while the max/min spread exceeds 1%, up to 3,
keep the least noisy). An optional functional pre-check runs the SDK's own `nki.simulate_kernel`
first, so incorrect kernels do not spend device time. Without the SDK every evaluation returns
`bench_error` with what to install, instead of raising.
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelopt_graph.tools.backend import EvalResult, EvalSettings, EvalStatus, KernelTask, normalized_code_hash
from accelopt_graph.tools.evaluation import Measurement, MeasurementError, evaluate_candidate
from accelopt_graph.tools.pool import DeviceSlots, Executor, LocalPool
from accelopt_graph.tools.sandbox import SandboxJob, SandboxRun

NEURON_PIP_INDEX = "https://pip.repos.neuron.amazonaws.com"
MISSING_SDK_MESSAGE = (
    "The neuron backend needs the AWS Neuron SDK on a Trainium (trn1/trn2) instance: {missing}. "
    "Install the compiler from AWS's pip repository (it is not on PyPI; the PyPI 'neuronx-cc' is a "
    "placeholder): python -m pip install --extra-index-url "
    f"{NEURON_PIP_INDEX} neuronx-cc, and the aws-neuronx-tools OS package for neuron-profile "
    "(installed to /opt/aws/neuron/bin; put it on PATH). Or use --backend nkisim (CPU simulator)."
)
# AccelOpt's invocation (trainium.md §3.1, S24): one logical core, no descriptor-generation engine.
BAREMETAL_COMPILE_OPTS = "--disable-dge --logical-nc-config=1"
NEURON_CC_FLAGS = "--auto-cast=none"  # precision rule: the compiler must not lower fp32 matmuls
NEFF_NAME, NTFF_NAME = "kernel.neff", "kernel.ntff"
# The counters the planner reads (algorithm.md, "Plan"); neuron-profile omits some when zero
# (trainium.md §5.4 item 5), so they are filled in as 0.
PLANNER_COUNTERS = (
    "total_time", "hbm_read_bytes", "hbm_write_bytes", "psum_read_bytes", "psum_write_bytes",
    "sbuf_read_bytes", "sbuf_write_bytes", "spill_save_bytes", "spill_reload_bytes",
    "hardware_flops", "transpose_flops", "peak_flops_bandwidth_ratio", "mm_arithmetic_intensity",
    "hfu_estimated_percent", "scalar_engine_active_time_percent",
    "vector_engine_active_time_percent", "gpsimd_engine_active_time_percent",
)


def _profiler_path() -> str | None:
    return shutil.which("neuron-profile") or next(
        (p for p in ("/opt/aws/neuron/bin/neuron-profile",) if os.access(p, os.X_OK)), None)


def missing_sdk() -> str | None:
    """Return what is missing for real runs (compiler, profiler), or None when both are there."""
    missing = []
    if importlib.util.find_spec("neuronxcc") is None:
        missing.append("Python package 'neuronxcc' not importable")
    if _profiler_path() is None:
        missing.append("'neuron-profile' not found on PATH or in /opt/aws/neuron/bin")
    return "; ".join(missing) or None


def device_env(*, core: str | None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment for compiling and running one kernel on one NeuronCore."""
    env = dict(base or {})
    env["NEURON_CC_FLAGS"] = NEURON_CC_FLAGS
    env["NEURON_RT_NUM_CORES"] = "1"
    if core is not None:
        env["NEURON_RT_VISIBLE_CORES"] = str(core)
    return env


def capture_command(profiler: str, neff: Path, ntff: Path) -> list[str]:
    """`neuron-profile capture`: execute the NEFF on the device and record its trace."""
    return [profiler, "capture", "-n", str(neff), "-s", str(ntff)]


def summary_command(profiler: str, neff: Path, ntff: Path) -> list[str]:
    """`neuron-profile view` as a summary JSON object (trainium.md §5.1, S23)."""
    return [profiler, "view", "--output-format", "summary-json", "-n", str(neff), "-s", str(ntff)]


class SummaryFormatError(ValueError):
    """neuron-profile's summary-json output was not what the documented format promises."""


def parse_summary_json(text: str) -> dict[str, float]:
    """Parse `neuron-profile view --output-format summary-json` into numeric counters.

    The output is a JSON object whose first value is the summary dict (AccelOpt takes that, S24).
    Fields neuron-profile leaves out when zero are filled in as 0 for the planner's counters;
    non-numeric fields are dropped. `total_time` is in seconds and must be positive.
    """
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SummaryFormatError(f"summary-json is not JSON: {exc}") from exc
    if not isinstance(doc, dict) or not doc:
        raise SummaryFormatError("summary-json must be a non-empty JSON object")
    summary = next(iter(doc.values()))
    if not isinstance(summary, dict):
        raise SummaryFormatError("summary-json's first value must be an object of fields")
    counters = {}
    for key, value in summary.items():
        if isinstance(value, bool):
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue
        if math.isfinite(number):
            counters[key] = number
    if counters.get("total_time", 0.0) <= 0:
        raise SummaryFormatError("summary-json has no positive 'total_time' (seconds)")
    return {**{k: 0.0 for k in PLANNER_COUNTERS}, **counters}


@dataclass(frozen=True)
class TimingResult:
    """The kept measurement of the timing protocol."""

    latency_ms: float  # mean of the kept measurement
    samples_ms: tuple[float, ...]
    spread: float  # (max - min) / min of the kept measurement
    repeats: int  # measurements taken
    stable: bool  # the kept measurement's spread is within the limit
    all_spreads: tuple[float, ...] = field(default=())

    def stats(self) -> dict[str, float]:
        s = self.samples_ms
        return {"mean": self.latency_ms, "min": min(s), "max": max(s),
                "std": statistics.pstdev(s), "spread": self.spread, "repeats": float(self.repeats),
                "iters": float(len(s))}


def timing_protocol(sample_ms: Callable[[], float], *, warmup: int = 2, iters: int = 10,
                    max_repeats: int = 3, max_spread: float = 0.01) -> TimingResult:
    """Run the paper's timing protocol over `sample_ms` (one run's latency in ms).

    Each measurement is `warmup` discarded runs then `iters` timed runs; measure again while the
    max/min spread exceeds `max_spread`, at most `max_repeats` times; keep the least noisy.
    """
    if iters < 1 or max_repeats < 1 or warmup < 0:
        raise ValueError(f"timing_protocol: need iters >= 1, max_repeats >= 1, warmup >= 0; got "
                         f"{iters=}, {max_repeats=}, {warmup=}")
    best: tuple[float, list[float]] | None = None
    spreads = []
    for repeat in range(1, max_repeats + 1):
        for _ in range(warmup):
            sample_ms()
        samples = [float(sample_ms()) for _ in range(iters)]
        if min(samples) <= 0:
            raise MeasurementError(f"non-positive latency sample {min(samples)} ms")
        spread = (max(samples) - min(samples)) / min(samples)
        spreads.append(spread)
        if best is None or spread < best[0]:
            best = (spread, samples)
        if spread <= max_spread:
            break
    spread, samples = best
    return TimingResult(latency_ms=statistics.fmean(samples), samples_ms=tuple(samples),
                        spread=spread, repeats=repeat, stable=spread <= max_spread,
                        all_spreads=tuple(spreads))


def clocked(run: Callable[[], Any], clock: Callable[[], float] = time.perf_counter) -> Callable[[], float]:
    """Turn `run` into a sampler of its wall time in ms under `clock` (injectable for tests)."""
    def sample() -> float:
        start = clock()
        run()
        return (clock() - start) * 1e3
    return sample


Runner = Callable[..., subprocess.CompletedProcess]


def profile_sampler(*, profiler: str, neff: Path, workdir: Path, env: Mapping[str, str],
                    runner: Runner = subprocess.run, timeout_s: float = 600.0,
                    last: dict[str, Any] | None = None) -> Callable[[], float]:
    """A sampler that executes the NEFF once under the profiler and returns `total_time` in ms.

    The device's own timestamps give the latency, so nothing the kernel's process did can change
    it. `last` (if given) receives the most recent summary's counters.
    """
    count = [0]

    def sample() -> float:
        count[0] += 1
        ntff = workdir / f"timing_{count[0]}.ntff"
        for cmd in (capture_command(profiler, neff, ntff), summary_command(profiler, neff, ntff)):
            proc = runner(cmd, cwd=workdir, env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=timeout_s)
            if proc.returncode != 0:
                raise MeasurementError(f"{' '.join(cmd[:2])} failed ({proc.returncode}): "
                                       f"{(proc.stderr or proc.stdout)[-2000:]}")
        counters = parse_summary_json(proc.stdout)
        ntff.unlink(missing_ok=True)
        if last is not None:
            last.clear()
            last.update(counters)
        return counters["total_time"] * 1e3
    return sample


def observe_device_profile(workdir: Path, job: SandboxJob, *, runner: Runner = subprocess.run) -> dict:
    """Trusted post-processing on the worker: time and profile the NEFF the sandbox compiled."""
    args = job.observe_args
    neff = workdir / "out" / NEFF_NAME
    profiler = _profiler_path()
    if profiler is None or not neff.exists():
        return {"error": "no NEFF to profile" if profiler else "neuron-profile not found"}
    counters: dict[str, Any] = {}
    sampler = profile_sampler(profiler=profiler, neff=neff, workdir=workdir, env=job.env,
                              runner=runner, last=counters)
    try:
        timing = timing_protocol(sampler, warmup=args.get("warmup", 2), iters=args.get("iters", 10),
                                 max_repeats=args.get("max_repeats", 3),
                                 max_spread=args.get("max_spread", 0.01))
    except (MeasurementError, SummaryFormatError, subprocess.TimeoutExpired) as exc:
        return {"error": f"device timing failed: {exc}"}
    return {"latency_ms": timing.latency_ms, "latency_stats": timing.stats(),
            "counters": dict(counters), "stable": timing.stable,
            "commands": [" ".join(summary_command("neuron-profile", neff, neff.with_suffix(".ntff")))]}


def device_measurement(run: SandboxRun, timed: int, hardware: str) -> Measurement:
    """Read the trusted worker's device timing out of the sandbox run."""
    observed = run.observed
    if "error" in observed or "latency_ms" not in observed:
        raise MeasurementError(observed.get("error", "no device timing was recorded"))
    return Measurement(latency_ms=float(observed["latency_ms"]),
                       latency_stats=dict(observed["latency_stats"]),
                       counters=dict(observed["counters"]),
                       details={"timing_stable": observed.get("stable", False),
                                "profile_command": observed.get("commands", [])})


class NeuronChildEngine:
    """Sandbox side: compile and run with the SDK (`ACCELOPT_NEURON_MODE` = simulate | device)."""

    compile_errors: tuple[type[BaseException], ...] = (SyntaxError,)

    def prepare(self) -> None:
        import neuronxcc.nki as nki

        self.nki = nki
        self.mode = os.environ.get("ACCELOPT_NEURON_MODE", "device")

    def load(self, path: Path, name: str) -> Callable:
        spec = importlib.util.spec_from_file_location("candidate_kernel", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if not hasattr(module, name):
            raise NameError(f"kernel file defines no function named {name!r}")
        return getattr(module, name)

    def run(self, kernel: Callable, inputs: list, *, trace: bool) -> tuple[list, None]:
        import numpy as np

        if self.mode == "simulate":
            result = self.nki.simulate_kernel(kernel, *inputs)
        else:
            saves = ({"save_neff_name": str(Path("out") / NEFF_NAME),
                      "save_trace_name": str(Path("out") / NTFF_NAME)} if trace else {})
            result = self.nki.baremetal(kernel, additional_compile_opt=BAREMETAL_COMPILE_OPTS,
                                        **saves)(*inputs)
        items = list(result) if isinstance(result, (tuple, list)) else [result]
        return [np.asarray(x) for x in items], None


class NeuronBackend:
    """Evaluate NKI kernels on real NeuronCores, one sandbox per evaluation, one core per slot."""

    name = "neuron"

    def __init__(self, *, executor: Executor | None = None, cores: Sequence[int] = (0,),
                 policy: bool = True, hardware: str = "trn1"):
        self.executor = executor or LocalPool(DeviceSlots.neuron_cores(cores))
        self.policy = policy
        self.hardware = hardware

    def _unavailable(self, code: str, settings: EvalSettings, why: str) -> EvalResult:
        return EvalResult(status=EvalStatus.BENCH_ERROR, error=MISSING_SDK_MESSAGE.format(missing=why),
                          source="hardware", backend=self.name, hardware=settings.hardware,
                          code_hash=normalized_code_hash(code) if code else "")

    def evaluate(self, task: KernelTask, code: str, settings: EvalSettings) -> EvalResult:
        """Pre-check (optional), compile, run, check, time and profile `code` on a NeuronCore."""
        if why := missing_sdk():
            return self._unavailable(code, settings, why)
        common = dict(executor=self.executor, engine="neuron", backend=self.name,
                      source="hardware", policy=self.policy, confinement="toolchain")
        if settings.simulate_first:
            pre = evaluate_candidate(task, code, settings, measure=None,
                                     env={**device_env(core=None), "ACCELOPT_NEURON_MODE": "simulate"},
                                     **common)
            if pre.status is not EvalStatus.OK:
                return pre.model_copy(update={"details": {**pre.details, "stage": "simulate_first"}})
        timing = {k: getattr(settings, k) for k in ("warmup", "iters", "max_repeats", "max_spread")}
        return evaluate_candidate(task, code, settings, measure=device_measurement,
                                  env={**device_env(core=None), "ACCELOPT_NEURON_MODE": "device"},
                                  observe="accelopt_graph.tools.neuron:observe_device_profile",
                                  observe_args=timing, **common)

    def hardware_info(self, hardware: str) -> Mapping[str, Any]:
        """Peaks and the knowledge-pack name the prompts use; says whether the SDK is present."""
        return {"name": hardware, "knowledge_pack": f"{hardware}-nki-legacy", "source": "hardware",
                "sdk_missing": missing_sdk(), "pip_index": NEURON_PIP_INDEX}

    def close(self) -> None:
        self.executor.close()
