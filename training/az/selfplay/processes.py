"""Self-play in several processes: a pool of :class:`~.worker.SelfPlayWorker` s.

Each process builds its own worker from plain data (the network config, the search's
config, the games in flight and the rules) and batches its own network calls; an
iteration sends every worker the current weights and a share of the games with a seed of
its own, and merges what they return into one :class:`~.worker.SelfPlayBatch`. The
worker's interface is all a remote actor needs too (``generate(weights, n_games,
seed)``), so the same split works with actors on a cluster. For a given number of workers
the samples are the same from run to run.

The processes ignore ``SIGINT``: a Ctrl-C in the terminal reaches every process of the
program, and the learner's process alone handles it (it stops the workers when the run
ends). A worker that dies (killed, out of memory) makes :meth:`WorkerPool.generate` raise a
one-line :class:`WorkerError` at once, and :meth:`WorkerPool.close` ends the processes
without waiting for the games they are playing.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import numpy as np
import torch

from patchwork_env.agents.az.config import SearchConfig
from patchwork_env.agents.device import on_cpu
from patchwork_env.training.az.selfplay.worker import SelfPlayBatch, SelfPlayWorker

_WORKER: SelfPlayWorker | None = None
STOP_SECONDS = 10.0
"""How long :meth:`WorkerPool.close` waits for a stopped process to end."""


class WorkerError(RuntimeError):
    """A self-play process that ended or failed while playing (the message is one line)."""


@contextlib.contextmanager
def _sigint_held() -> Iterator[None]:
    """Hold ``SIGINT`` back in the block: the processes started there begin with it
    blocked (a signal mask survives their start) until :func:`_start` makes them ignore it,
    and a Ctrl-C that arrives meanwhile reaches this process when the block ends instead of
    being lost. A thread other than the main one leaves the signals as they are."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _start(net_config: dict[str, Any], config: SearchConfig, parallel_games: int, rules: str,
           threads: int, worker_options: dict[str, Any]) -> None:
    global _WORKER
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the learner's process handles Ctrl-C
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # held by _sigint_held
    torch.set_num_threads(threads)
    _WORKER = SelfPlayWorker(net_config, config, parallel_games, rules, threads=threads,
                             **worker_options)


def _generate(weights: dict[str, torch.Tensor], n_games: int, seed: int) -> SelfPlayBatch:
    assert _WORKER is not None, "the pool's initializer builds the worker"
    return _WORKER.generate(weights, n_games, seed)


def worker_seeds(seed: int, n_workers: int) -> list[int]:
    """The seed of each worker's share of an iteration seeded by ``seed`` (worker ``i``:
    ``[seed, i]``), wherever the workers run."""
    return [int(np.random.SeedSequence([seed, i]).generate_state(1)[0])
            for i in range(n_workers)]


def shares(n_games: int, n_workers: int) -> list[int]:
    """How many of ``n_games`` each worker plays (as even as possible, none empty)."""
    n = min(n_games, n_workers)
    return [n_games // n + (i < n_games % n) for i in range(n)]


class WorkerPool:
    """``n_workers`` processes, each with a self-play worker on ``threads`` torch threads
    (``net_config``, ``config``, ``parallel_games``, ``rules``: as
    :class:`~.worker.SelfPlayWorker` takes them; ``worker_options``: its keyword options,
    such as ``full_search_fraction``)."""

    def __init__(self, net_config: dict[str, Any], config: SearchConfig, n_workers: int,
                 parallel_games: int, rules: str = "default", threads: int = 1,
                 worker_options: dict[str, Any] | None = None) -> None:
        if n_workers < 2:
            raise ValueError(f"a worker pool needs at least 2 workers, got {n_workers}")
        self.n_workers = n_workers
        self._pool = ProcessPoolExecutor(n_workers, multiprocessing.get_context("spawn"),
                                         initializer=_start,
                                         initargs=(net_config, config, parallel_games, rules,
                                                   threads, worker_options or {}))

    def generate(self, weights: dict[str, torch.Tensor], n_games: int, seed: int
                 ) -> SelfPlayBatch:
        """``n_games`` games split over the workers (worker ``i`` seeded by ``[seed, i]``);
        :class:`WorkerError` if a worker process dies meanwhile."""
        try:
            with _sigint_held():  # the processes a submit starts ignore Ctrl-C
                weights = on_cpu(weights)
                jobs = [self._pool.submit(_generate, weights, n, s)
                        for n, s in zip(shares(n_games, self.n_workers),
                                        worker_seeds(seed, self.n_workers), strict=False)]
            return merge([job.result() for job in jobs])
        except BrokenProcessPool:
            raise WorkerError("a self-play worker process ended while playing (killed, or "
                              "out of memory)") from None
        except MemoryError:
            raise WorkerError("a self-play worker process ran out of memory (try fewer "
                              "--parallel-games or --workers)") from None

    def _processes(self) -> list[multiprocessing.process.BaseProcess]:
        return list((getattr(self._pool, "_processes", None) or {}).values())

    def close(self) -> None:
        """Stop the processes, without waiting for the games they are playing."""
        processes = self._processes()
        self._pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(STOP_SECONDS)


def merge(batches: list[SelfPlayBatch]) -> SelfPlayBatch:
    """One batch of several workers' (game ids renumbered; times: the longest wall time,
    summed busy times)."""
    offsets = [np.zeros(1, np.int64)]
    base = 0
    game_base = 0
    game_ids = []
    for b in batches:
        offsets.append(b.target_offsets[1:] + base)
        base += int(b.target_offsets[-1])
        game_ids.append(b.game_ids + game_base)
        game_base += b.games
    games = sum(b.games for b in batches)
    stats = {k: float(sum(b.stats[k] for b in batches))
             for k in ("tree_seconds", "network_seconds", "evaluations", "simulations", "moves")}
    stats["seconds"] = max(b.stats["seconds"] for b in batches)
    for k in ("mean_abs_score_diff", "player0_wins"):
        stats[k] = float(sum(b.stats[k] * b.games for b in batches) / games)
    return SelfPlayBatch(
        states=np.concatenate([b.states for b in batches]),
        target_offsets=np.concatenate(offsets),
        target_actions=np.concatenate([b.target_actions for b in batches]),
        target_probs=np.concatenate([b.target_probs for b in batches]),
        values=np.concatenate([b.values for b in batches]),
        root_values=np.concatenate([b.root_values for b in batches]),
        game_ids=np.concatenate(game_ids), winners=np.concatenate([b.winners for b in batches]),
        games=games, stats=stats, policy_targets=np.concatenate(
            [np.ones(len(b), bool) if b.policy_targets is None else b.policy_targets
             for b in batches]),
        score_diffs=_joined([b.score_diffs for b in batches]),
        final_quilts=_joined([b.final_quilts for b in batches]))


def _joined(parts: list[np.ndarray | None]) -> np.ndarray | None:
    """The parts end to end, or ``None`` if any is unknown."""
    return None if any(p is None for p in parts) else np.concatenate(parts)
