"""Self-play workers as Ray actors: the worker pool of a run that scales out on a cluster.

:class:`RayWorkerPool` has the interface of :class:`~.workers.WorkerPool`
(``generate(weights, n_games, seed)``, ``close()``), with each
:class:`~.selfplay.SelfPlayWorker` a Ray actor holding CPUs of its own: on this machine
(``address="local"``: Ray is started for the run and stopped after it) or on a running
cluster (``"auto"``, or the head node's ``HOST:PORT``). Every iteration puts the weights
into Ray's object store once; each actor plays its share of the games with the seed a
process pool would give it (:func:`~.workers.worker_seeds`), so for a given number of
workers the samples are the same wherever the workers run.

Needs Ray (the ``rllib`` extra: ``pip install -e ".[rllib]"``).
"""

from __future__ import annotations

import os
from typing import Any

import torch

from patchwork_env.agents.az.config import SearchConfig
from patchwork_env.training.az.selfplay import SelfPlayBatch, SelfPlayWorker
from patchwork_env.training.az.workers import merge, shares, worker_seeds

LOCAL = "local"
"""The address that starts Ray on this machine for the run."""


def import_ray() -> Any:
    """The ``ray`` module; a ``RuntimeError`` saying how to install it if it is missing."""
    try:
        import ray
    except ImportError:
        raise RuntimeError('self-play on Ray needs Ray: pip install -e ".[rllib]"') from None
    return ray


class RayWorkerPool:
    """``n_workers`` self-play actors, each with ``threads`` CPUs (and torch threads).

    ``net_config``, ``config``, ``parallel_games``, ``rules``: as
    :class:`~.selfplay.SelfPlayWorker` takes them. A Ray already started in this process
    (``ray.init``) is used as it is; otherwise Ray is started (``"local"``, with at least
    a CPU for each worker: more workers than cores share them) or joined (a cluster's
    address). Actors that the cluster has no CPUs for would wait for ever, so they are
    refused with an error instead.
    """

    def __init__(self, net_config: dict[str, Any], config: SearchConfig, n_workers: int,
                 parallel_games: int, rules: str = "default", address: str = LOCAL,
                 threads: int = 1) -> None:
        if n_workers < 1:
            raise ValueError(f"a Ray worker pool needs at least 1 worker, got {n_workers}")
        self._ray = ray = import_ray()
        self._actors: list[Any] = []
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray and address == LOCAL:
            # More workers than cores share the cores, as worker processes would.
            ray.init(num_cpus=max(os.cpu_count() or 1, n_workers * threads),
                     include_dashboard=False, log_to_driver=False)
        elif self._owns_ray:
            ray.init(address=address, log_to_driver=False)
        cpus = ray.cluster_resources().get("CPU", 0.0)
        if cpus < n_workers * threads:
            self.close()
            raise ValueError(f"{n_workers} Ray workers of {threads} CPU(s) need "
                             f"{n_workers * threads} CPUs; the cluster has {cpus:g}")
        actor = ray.remote(num_cpus=threads)(SelfPlayWorker)
        self._actors = [actor.remote(net_config, config, parallel_games, rules, threads)
                        for _ in range(n_workers)]
        self.n_workers = n_workers

    def generate(self, weights: dict[str, torch.Tensor], n_games: int, seed: int
                 ) -> SelfPlayBatch:
        """``n_games`` games split over the actors (actor ``i`` seeded as worker ``i`` of a
        process pool)."""
        ray = self._ray
        shared = ray.put(weights)
        jobs = [actor.generate.remote(shared, n, s)
                for actor, n, s in zip(self._actors, shares(n_games, self.n_workers),
                                       worker_seeds(seed, self.n_workers), strict=False)]
        return merge(ray.get(jobs))

    def close(self) -> None:
        """Stop the actors, and Ray if the pool started it."""
        for actor in self._actors:
            self._ray.kill(actor)
        self._actors = []
        if self._owns_ray:
            self._ray.shutdown()
            self._owns_ray = False
