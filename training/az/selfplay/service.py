"""Self-play processes that share one inference service: many cores feeding one device.

:class:`ServicePool` has the interface of :class:`~.processes.WorkerPool`
(``generate(weights, n_games, seed)``, ``close()``) but its processes hold no network:
each runs a :class:`~.worker.SelfPlayWorker` whose leaves go to an
:class:`~.inference.InferenceService` in the learner's process, which evaluates the
leaves of all processes together with the learner's own network on the run's device. So
the weights never travel: the service reads the network the learner has just trained.

Worker ``i`` always plays the ``i``-th share of an iteration's games with the seed a
process pool gives it (:func:`~.processes.worker_seeds`), and the service's batches are the
same from run to run, so for a given number of workers the samples are too.

The processes ignore ``SIGINT`` (the learner's process handles Ctrl-C). A process that
ends while playing makes :meth:`ServicePool.generate` raise a one-line
:class:`~.processes.WorkerError` at once; so does a failed network call of the service.
"""

from __future__ import annotations

from multiprocessing.connection import Connection
from typing import Any

from patchwork_env.agents.az.config import SearchConfig
from patchwork_env.agents.device import use_threads
from patchwork_env.training.az.selfplay.inference import (
    InferenceService,
    NetworkEvaluator,
    RemoteEvaluator,
    ServiceLink,
)
from patchwork_env.training.az.selfplay.processes import (
    Failure,
    SpawnedWorkers,
    ignore_stop_signals,
    merge,
    serve,
    shares,
    worker_seeds,
)
from patchwork_env.training.az.selfplay.worker import SelfPlayBatch, SelfPlayWorker


def _play(orders: Connection, link: ServiceLink, config: SearchConfig, parallel_games: int,
          rules: str, threads: int, worker_options: dict[str, Any]) -> None:
    """A worker process: play the games it is sent, its leaves evaluated by the service."""
    ignore_stop_signals()
    use_threads(threads)
    evaluate = RemoteEvaluator(link)
    worker = SelfPlayWorker(None, config, parallel_games, rules, evaluate=evaluate,
                            **worker_options)

    def play(order: tuple[int, int]) -> SelfPlayBatch:
        try:
            return worker.generate(None, *order)
        finally:
            evaluate.done()

    try:
        serve(orders, play)
    finally:
        evaluate.close()


class ServicePool:
    """``n_workers`` self-play processes (one thread each) whose leaves ``evaluate``
    evaluates in this process; ``obs_size`` is the observation's size under ``rules``
    (``config``, ``parallel_games``, ``rules``: as :class:`~.worker.SelfPlayWorker`
    takes them; ``worker_options``: its keyword options)."""

    def __init__(self, evaluate: NetworkEvaluator, config: SearchConfig, n_workers: int,
                 parallel_games: int, obs_size: int, rules: str = "default",
                 threads: int = 1, worker_options: dict[str, Any] | None = None) -> None:
        if n_workers < 1:
            raise ValueError(f"a service pool needs at least 1 worker, got {n_workers}")
        self.n_workers = n_workers
        self.service = InferenceService(evaluate, n_workers, parallel_games, obs_size)
        try:
            self._workers = SpawnedWorkers(
                _play, lambda i: (self.service.link(i), config, parallel_games, rules,
                                  threads, worker_options or {}), n_workers, "self-play")
        except BaseException:
            self.service.close()
            raise
        self._processes = self._workers.processes

    def generate(self, weights: Any, n_games: int, seed: int) -> SelfPlayBatch:
        """``n_games`` games split over the workers (worker ``i`` seeded by ``[seed, i]``),
        their leaves evaluated by the service with the network it holds (``weights`` is
        not used: the service's network is the learner's); :class:`WorkerError` if a
        process dies or the service fails meanwhile."""
        jobs = list(zip(shares(n_games, self.n_workers), worker_seeds(seed, self.n_workers),
                        strict=False))
        self.service.begin(range(len(jobs)))
        return merge(self._workers.ask(jobs, self._explain))

    def _explain(self, worker: int, failure: Failure | None) -> str:
        if self.service.failure:
            return self.service.failure
        if failure is None:
            return f"self-play worker {worker} ended while playing (killed, or out of memory)"
        return f"a self-play worker failed: {failure.message}"

    def close(self) -> None:
        """Stop the processes (without waiting for the games they are playing) and the
        service."""
        self._workers.close()
        self.service.close()


__all__ = ["ServicePool"]
