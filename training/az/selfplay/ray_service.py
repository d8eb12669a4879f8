"""Self-play actors on a Ray cluster sharing one inference service actor.

The cluster form of :mod:`.service`: :class:`RayServicePool` starts an inference
service actor (on a GPU of the cluster when the run's device is one) and ``n_workers``
self-play actors holding no network; at every simulation step each actor sends its
leaves to the service, which evaluates one message of every actor taking part per round,
in actor order, as :class:`~.inference.InferenceService` does, so the games are the same
as with worker processes and a service on one machine. The observations and results
travel through Ray's object store; the weights go to the service once per iteration.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import torch

from patchwork_env.agents.az.config import SearchConfig
from patchwork_env.agents.az.net import build_az_net, make_evaluator
from patchwork_env.agents.device import on_cpu, resolve_device, use_threads
from patchwork_env.training.az.selfplay.processes import (
    merge,
    shares,
    worker_seeds,
)
from patchwork_env.training.az.selfplay.ray_actors import check_resources, connect, ray_call
from patchwork_env.training.az.selfplay.worker import SelfPlayBatch, SelfPlayWorker


class ServiceActor:
    """The inference service as a Ray actor (asynchronous: the calls of a round wait
    together until every actor taking part has sent its message)."""

    def __init__(self, net_config: dict[str, Any], device: str, precision: str,
                 threads: int) -> None:
        torch.set_num_threads(threads)
        self.device = resolve_device(device)
        self.net = build_az_net(net_config).to(self.device).eval()
        self._evaluate = make_evaluator(self.net, self.device, precision)
        self._active: set[int] = set()
        self._pending: dict[int, tuple[np.ndarray, asyncio.Future]] = {}

    def load(self, weights: dict[str, torch.Tensor]) -> None:
        """Evaluate with these weights from now on."""
        self.net.load_state_dict(weights)

    def begin(self, workers: list[int]) -> None:
        """The actors of the rounds to come (each until it says it is done)."""
        self._active = set(workers)

    async def evaluate(self, worker: int, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The logits and values of actor ``worker``'s leaves, once its round is full."""
        future = asyncio.get_running_loop().create_future()
        self._pending[worker] = (obs, future)
        self._run_round()
        return await future

    async def done(self, worker: int) -> None:
        """Actor ``worker`` sends nothing more until the next :meth:`begin`."""
        self._active.discard(worker)
        self._run_round()

    def _run_round(self) -> None:
        if not self._pending or not self._active.issubset(self._pending):
            return
        order = sorted(self._pending)
        pending, self._pending = self._pending, {}
        try:
            obs = np.concatenate([pending[w][0] for w in order])
            logits, values = self._evaluate(obs, None)
        except Exception as e:  # every actor of the round reports it
            for w in order:
                pending[w][1].set_exception(RuntimeError(
                    f"the inference service's network call failed: {e}"))
            return
        start = 0
        for w in order:
            k = len(pending[w][0])
            pending[w][1].set_result((logits[start:start + k], values[start:start + k]))
            start += k


class _RemoteLeaves:
    """A self-play actor's evaluator: its leaves go to the service actor."""

    def __init__(self, service: Any, worker: int) -> None:
        self.service, self.worker = service, worker

    def __call__(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        import ray

        return ray.get(self.service.evaluate.remote(self.worker, obs))


class ClientActor:
    """A self-play actor whose leaves the service actor evaluates."""

    def __init__(self, service: Any, worker: int, config: SearchConfig,
                 parallel_games: int, rules: str, threads: int,
                 worker_options: dict[str, Any] | None = None) -> None:
        use_threads(threads)
        self._leaves = _RemoteLeaves(service, worker)
        self._worker = SelfPlayWorker(None, config, parallel_games, rules,
                                      evaluate=self._leaves, **(worker_options or {}))

    def generate(self, n_games: int, seed: int) -> SelfPlayBatch:
        """Play ``n_games`` games, then leave the service's rounds."""
        import ray

        try:
            return self._worker.generate(None, n_games, seed)
        finally:
            ray.get(self._leaves.service.done.remote(self._leaves.worker))


class RayServicePool:
    """``n_workers`` self-play actors of ``threads`` CPUs each and one inference service
    actor evaluating their leaves on ``device`` with ``precision`` (``net_config``,
    ``config``, ``parallel_games``, ``rules``, ``address``: as
    :class:`~.ray_actors.RayWorkerPool` takes them)."""

    def __init__(self, net_config: dict[str, Any], config: SearchConfig, n_workers: int,
                 parallel_games: int, rules: str = "default", address: str = "local",
                 threads: int = 1, device: str = "cpu", precision: str = "fp32",
                 worker_options: dict[str, Any] | None = None) -> None:
        self._ray, self._owns_ray = connect(address, n_workers * threads + 1)
        ray = self._ray
        self._actors: list[Any] = []
        self.n_workers = n_workers
        try:
            gpus = 1 if resolve_device(device).type == "cuda" else 0
            check_resources(ray, f"{n_workers} Ray workers of {threads} CPU(s) and an "
                            "inference service", n_workers * threads + 1, gpus)
            self._service = ray.remote(num_cpus=1, num_gpus=gpus)(ServiceActor).remote(
                net_config, device, precision, max(threads, 1))
            client = ray.remote(num_cpus=threads)(ClientActor)
            self._actors = [client.remote(self._service, i, config, parallel_games, rules,
                                          threads, worker_options)
                            for i in range(n_workers)]
        except BaseException:
            self.close()
            raise

    def generate(self, weights: dict[str, torch.Tensor], n_games: int, seed: int
                 ) -> SelfPlayBatch:
        """``n_games`` games split over the actors (actor ``i`` seeded as worker ``i`` of a
        process pool), their leaves evaluated with ``weights``."""
        ray = self._ray
        jobs = list(zip(shares(n_games, self.n_workers), worker_seeds(seed, self.n_workers),
                        strict=False))
        ray_call(ray, [self._service.load.remote(ray.put(on_cpu(weights))),
                       self._service.begin.remote(list(range(len(jobs))))])
        return merge(ray_call(ray, [actor.generate.remote(n, s)
                                    for actor, (n, s) in zip(self._actors, jobs,
                                                             strict=False)]))

    def close(self) -> None:
        """Stop the actors, and Ray if the pool started it."""
        for actor in [*self._actors, *([self._service] if hasattr(self, "_service") else [])]:
            self._ray.kill(actor)
        self._actors = []
        if self._owns_ray:
            self._ray.shutdown()
            self._owns_ray = False


__all__ = ["RayServicePool"]
