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

import contextlib
import multiprocessing
import signal
from multiprocessing.connection import Connection, wait
from typing import Any

import torch

from patchwork_env.agents.az.config import SearchConfig
from patchwork_env.training.az.selfplay.inference import (
    InferenceService,
    NetworkEvaluator,
    RemoteEvaluator,
    ServiceLink,
)
from patchwork_env.training.az.selfplay.processes import (
    STOP_SECONDS,
    WorkerError,
    merge,
    shares,
    worker_seeds,
)
from patchwork_env.training.az.selfplay.worker import SelfPlayBatch, SelfPlayWorker


def _play(link: ServiceLink, orders: Connection, config: SearchConfig, parallel_games: int,
          rules: str, threads: int, worker_options: dict[str, Any]) -> None:
    """A worker process: play the games it is sent, until it is sent ``None``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the learner's process handles Ctrl-C
    torch.set_num_threads(threads)
    evaluate = RemoteEvaluator(link)
    worker = SelfPlayWorker(None, config, parallel_games, rules, evaluate=evaluate,
                            **worker_options)
    try:
        while (order := orders.recv()) is not None:
            n_games, seed = order
            try:
                batch: Any = worker.generate(None, n_games, seed)
            except Exception as e:  # reported by the learner's process, in one line
                batch = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            evaluate.done()
            orders.send(batch)
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
        context = multiprocessing.get_context("spawn")
        self._orders: list[Connection] = []
        self._processes: list[Any] = []
        try:
            for i in range(n_workers):
                ours, theirs = context.Pipe()
                process = context.Process(
                    target=_play, name=f"self-play-{i}", daemon=True,
                    args=(self.service.link(i), theirs, config, parallel_games, rules,
                          threads, worker_options or {}))
                process.start()
                theirs.close()
                self._orders.append(ours)
                self._processes.append(process)
        except BaseException:
            self.close()
            raise

    def generate(self, weights: Any, n_games: int, seed: int) -> SelfPlayBatch:
        """``n_games`` games split over the workers (worker ``i`` seeded by ``[seed, i]``),
        their leaves evaluated by the service with the network it holds (``weights`` is
        not used: the service's network is the learner's); :class:`WorkerError` if a
        process dies or the service fails meanwhile."""
        jobs = list(zip(shares(n_games, self.n_workers), worker_seeds(seed, self.n_workers),
                        strict=False))
        self.service.begin(range(len(jobs)))
        for orders, job in zip(self._orders, jobs, strict=False):
            orders.send(job)
        results: dict[int, Any] = {}
        pending = {self._orders[i]: i for i in range(len(jobs))}
        sentinels = {self._processes[i].sentinel: i for i in range(len(jobs))}
        while pending:
            for ready in wait(list(pending) + list(sentinels)):
                if (ready in sentinels and self._orders[sentinels[ready]] in pending
                        and not self._orders[sentinels[ready]].poll()):
                    raise WorkerError(self._ended(sentinels[ready]))
                if ready in pending:
                    worker = pending.pop(ready)  # type: ignore[call-overload]
                    try:
                        results[worker] = ready.recv()  # type: ignore[union-attr]
                    except (EOFError, OSError):
                        raise WorkerError(self._ended(worker)) from None
        failed = [r for r in results.values() if isinstance(r, str)]
        if failed:
            raise WorkerError(self.service.failure or f"a self-play worker failed: {failed[0]}")
        return merge([results[i] for i in range(len(jobs))])

    def _ended(self, worker: int) -> str:
        return (self.service.failure or f"self-play worker {worker} ended while playing "
                "(killed, or out of memory)")

    def close(self) -> None:
        """Stop the processes (without waiting for the games they are playing) and the
        service."""
        for orders in self._orders:
            with contextlib.suppress(OSError):
                orders.send(None)
        for process in self._processes:
            process.join(0.5)
            if process.is_alive():
                process.terminate()
                process.join(STOP_SECONDS)
        for orders in self._orders:
            orders.close()
        self._orders, self._processes = [], []
        self.service.close()


__all__ = ["ServicePool"]
