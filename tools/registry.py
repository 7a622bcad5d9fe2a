"""Backends by name (`BACKENDS`) and `make_backend`, the one place a backend is assembled.

Config chooses a backend, an executor (local process pool or Ray) and how many device slots;
callers get a `KernelBackend` and never wire pools or executors themselves.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from accelopt_graph.tools.backend import KernelBackend
from accelopt_graph.tools.pool import DeviceSlots, Executor, LocalPool

ExecutorKind = Literal["local", "ray"]


def _make_executor(*, executor: ExecutorKind, slots: DeviceSlots, ray_address: str | None,
                   ray_resource: str, ray_init: dict | None) -> Executor:
    if executor == "local":
        return LocalPool(slots)
    if executor == "ray":
        from accelopt_graph.tools.ray_executor import RayExecutor

        return RayExecutor(address=ray_address, resource=ray_resource, init_kwargs=ray_init)
    raise ValueError(f"make_backend: executor must be 'local' or 'ray', got {executor!r}")


def _sim(*, executor: Executor, policy: bool, **_: object) -> KernelBackend:
    from accelopt_graph.tools.sim_backend import SimBackend

    return SimBackend(executor=executor, policy=policy)


def _neuron(*, executor: Executor, policy: bool, hardware: str, **_: object) -> KernelBackend:
    from accelopt_graph.tools.neuron import NeuronBackend

    return NeuronBackend(executor=executor, policy=policy, hardware=hardware)


BACKENDS: dict[str, tuple[Callable[..., KernelBackend], str]] = {
    "nkisim": (_sim, "CPU"),
    "neuron": (_neuron, "neuron_cores"),
}


def make_backend(name: str = "nkisim", *, hardware: str = "trn1", executor: ExecutorKind = "local",
                 workers: int = 2, neuron_cores: Sequence[int] | None = None,
                 ray_address: str | None = None, ray_init: dict | None = None,
                 policy: bool = True) -> KernelBackend:
    """Build a backend with its executor: `workers` CPU slots for nkisim, `neuron_cores` for neuron."""
    if name not in BACKENDS:
        raise ValueError(f"make_backend: unknown backend {name!r}; known: {sorted(BACKENDS)}")
    factory, resource = BACKENDS[name]
    if resource == "neuron_cores":
        slots = DeviceSlots.neuron_cores(list(neuron_cores) if neuron_cores is not None else range(workers))
    else:
        slots = DeviceSlots.cpu_workers(workers)
    pool = _make_executor(executor=executor, slots=slots, ray_address=ray_address,
                          ray_resource=resource, ray_init=ray_init)
    return factory(executor=pool, policy=policy, hardware=hardware)
