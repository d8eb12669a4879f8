"""Self-play in several processes: a pool of :class:`~.selfplay.SelfPlayWorker` s.

Each process builds its own worker from plain data (the network config, the search's
config, the games in flight and the rules) and batches its own network calls; an
iteration sends every worker the current weights and a share of the games with a seed of
its own, and merges what they return into one :class:`~.selfplay.SelfPlayBatch`. The
worker's interface is all a remote actor needs too (``generate(weights, n_games,
seed)``), so the same split works with actors on a cluster. For a given number of workers
the samples are the same from run to run.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import torch

from patchwork_env.agents.az.config import SearchConfig
from patchwork_env.training.az.selfplay import SelfPlayBatch, SelfPlayWorker

_WORKER: SelfPlayWorker | None = None


def _start(net_config: dict[str, Any], config: SearchConfig, parallel_games: int, rules: str,
           threads: int) -> None:
    global _WORKER
    torch.set_num_threads(threads)
    _WORKER = SelfPlayWorker(net_config, config, parallel_games, rules, threads=threads)


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
    :class:`~.selfplay.SelfPlayWorker` takes them)."""

    def __init__(self, net_config: dict[str, Any], config: SearchConfig, n_workers: int,
                 parallel_games: int, rules: str = "default", threads: int = 1) -> None:
        if n_workers < 2:
            raise ValueError(f"a worker pool needs at least 2 workers, got {n_workers}")
        self.n_workers = n_workers
        self._pool = ProcessPoolExecutor(n_workers, multiprocessing.get_context("spawn"),
                                         initializer=_start,
                                         initargs=(net_config, config, parallel_games, rules,
                                                   threads))

    def generate(self, weights: dict[str, torch.Tensor], n_games: int, seed: int
                 ) -> SelfPlayBatch:
        """``n_games`` games split over the workers (worker ``i`` seeded by ``[seed, i]``)."""
        jobs = [self._pool.submit(_generate, weights, n, s)
                for n, s in zip(shares(n_games, self.n_workers),
                                worker_seeds(seed, self.n_workers), strict=False)]
        return merge([job.result() for job in jobs])

    def close(self) -> None:
        """Stop the processes."""
        self._pool.shutdown(cancel_futures=True)


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
        games=games, stats=stats)
