"""Self-play workers as Ray actors: the worker pool of a run that scales out on a cluster.

:class:`RayWorkerPool` has the interface of :class:`~.processes.WorkerPool`
(``generate(weights, n_games, seed)``, ``close()``), with each
:class:`~.worker.SelfPlayWorker` a Ray actor holding CPUs of its own: on this machine
(``address="local"``: Ray is started for the run and stopped after it) or on a running
cluster (``"auto"``, or the head node's ``HOST:PORT``). Every iteration puts the weights
into Ray's object store once; each actor plays its share of the games with the seed a
process pool would give it (:func:`~.processes.worker_seeds`), so for a given number of
workers the samples are the same wherever the workers run.

Needs Ray (the ``rllib`` extra: ``pip install -e ".[rllib]"``).
"""

from __future__ import annotations

import os
from typing import Any

import torch

from patchwork_env.agents.az.config import SearchConfig
from patchwork_env.agents.device import on_cpu
from patchwork_env.training.az.selfplay.processes import (
    WorkerError,
    merge,
    shares,
    worker_seeds,
)
from patchwork_env.training.az.selfplay.worker import SelfPlayBatch, SelfPlayWorker

LOCAL = "local"
"""The address that starts Ray on this machine for the run."""


def import_ray() -> Any:
    """The ``ray`` module; a ``RuntimeError`` saying how to install it if it is missing."""
    try:
        import ray
    except ImportError:
        raise RuntimeError('self-play on Ray needs Ray: pip install -e ".[rllib]"') from None
    return ray


def connect(address: str, cpus: int) -> tuple[Any, bool]:
    """Ray, started or joined: ``(ray, whether this call started it)``. A Ray already
    started in this process (``ray.init``) is used as it is; otherwise Ray is started
    (``"local"``, with at least ``cpus`` CPUs: more actors than cores share them) or
    joined (a cluster's address)."""
    ray = import_ray()
    if ray.is_initialized():
        return ray, False
    if address == LOCAL:
        ray.init(num_cpus=max(os.cpu_count() or 1, cpus), include_dashboard=False,
                 log_to_driver=False)
    else:
        ray.init(address=address, log_to_driver=False)
    return ray, True


def check_resources(ray: Any, what: str, cpus: int, gpus: int = 0) -> None:
    """A one-line ``ValueError`` unless the cluster has ``cpus`` CPUs and ``gpus`` GPUs for
    ``what``: actors it has no room for would wait for ever."""
    have = ray.cluster_resources()
    if have.get("CPU", 0.0) < cpus:
        raise ValueError(f"{what} need {cpus} CPUs; the cluster has {have.get('CPU', 0.0):g}")
    if have.get("GPU", 0.0) < gpus:
        raise ValueError(f"{what} need {gpus} GPU(s); the cluster has "
                         f"{have.get('GPU', 0.0):g}")


def ray_call(ray: Any, refs: list[Any]) -> list[Any]:
    """The results of ``refs``, in order; a one-line :class:`~.processes.WorkerError` as
    soon as one of them fails (an actor that died, an error raised in one)."""
    pending = list(refs)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        try:
            ray.get(ready[0])
        except ray.exceptions.RayActorError:
            raise WorkerError("a self-play actor ended while playing (killed, out of "
                              "memory, or its node left the cluster)") from None
        except ray.exceptions.RayTaskError as e:
            cause = e.cause if getattr(e, "cause", None) is not None else e
            raise WorkerError(f"a self-play actor failed: "
                              f"{str(cause).strip().splitlines()[-1]}") from None
    return ray.get(list(refs))


class RayWorkerPool:
    """``n_workers`` self-play actors, each with ``threads`` CPUs (and torch threads).

    ``net_config``, ``config``, ``parallel_games``, ``rules``: as
    :class:`~.worker.SelfPlayWorker` takes them; ``address``: see :func:`connect`.
    Actors that the cluster has no CPUs for would wait for ever, so they are refused with
    an error instead.
    """

    def __init__(self, net_config: dict[str, Any], config: SearchConfig, n_workers: int,
                 parallel_games: int, rules: str = "default", address: str = LOCAL,
                 threads: int = 1, worker_options: dict[str, Any] | None = None) -> None:
        if n_workers < 1:
            raise ValueError(f"a Ray worker pool needs at least 1 worker, got {n_workers}")
        self._actors: list[Any] = []
        ray, self._owns_ray = connect(address, n_workers * threads)
        self._ray = ray
        try:
            check_resources(ray, f"{n_workers} Ray workers of {threads} CPU(s)",
                            n_workers * threads)
        except ValueError:
            self.close()
            raise
        actor = ray.remote(num_cpus=threads)(SelfPlayWorker)
        self._actors = [actor.remote(net_config, config, parallel_games, rules, threads,
                                     **(worker_options or {}))
                        for _ in range(n_workers)]
        self.n_workers = n_workers

    def generate(self, weights: dict[str, torch.Tensor], n_games: int, seed: int
                 ) -> SelfPlayBatch:
        """``n_games`` games split over the actors (actor ``i`` seeded as worker ``i`` of a
        process pool); :class:`~.processes.WorkerError` if an actor dies meanwhile."""
        ray = self._ray
        shared = ray.put(on_cpu(weights))
        jobs = [actor.generate.remote(shared, n, s)
                for actor, n, s in zip(self._actors, shares(n_games, self.n_workers),
                                       worker_seeds(seed, self.n_workers), strict=False)]
        return merge(ray_call(ray, jobs))

    def close(self) -> None:
        """Stop the actors, and Ray if the pool started it."""
        for actor in self._actors:
            self._ray.kill(actor)
        self._actors = []
        if self._owns_ray:
            self._ray.shutdown()
            self._owns_ray = False
