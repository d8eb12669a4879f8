"""Self-play in several processes: a pool of :class:`~.worker.SelfPlayWorker` s.

Each process builds its own worker from plain data (the network config, the search's
config, the games in flight and the rules) and batches its own network calls; an
iteration sends every worker the current weights and a share of the games with a seed of
its own, and merges what they return into one :class:`~.worker.SelfPlayBatch`. The
worker's interface is all a remote actor needs too (``generate(weights, n_games,
seed)``), so the same split works with actors on a cluster. For a given number of workers
the samples are the same from run to run.

:class:`SpawnedWorkers` is how the learner's process talks to its self-play processes
(this pool's and :class:`~.service.ServicePool`'s): one pipe each, an order sent down it
and one reply back, and nothing in the learner's process but the pipes, so that no
background thread can hold up its exit. The processes ignore ``SIGINT`` and ``SIGTERM``:
a Ctrl-C in the terminal, or a scheduler's ``SIGTERM`` to the whole job, reaches every
process of the program, and the learner's process alone handles it (it stops the workers
when the run ends). A worker that dies (killed, out of memory) makes
:meth:`WorkerPool.generate` raise a one-line :class:`WorkerError` at once, and
:meth:`WorkerPool.close` ends the processes without waiting for the games they are
playing.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

import numpy as np
import torch

from patchwork_env.agents.az.config import SearchConfig
from patchwork_env.agents.device import on_cpu, use_threads
from patchwork_env.training.az.selfplay.worker import SelfPlayBatch, SelfPlayWorker

STOP_SECONDS = 10.0
"""How long :meth:`SpawnedWorkers.close` waits for a stopped process to end."""
IDLE_EXIT_SECONDS = 0.5
"""How long :meth:`SpawnedWorkers.close` gives the processes to end by themselves (an idle
one ends as soon as its pipe closes) before it stops them."""


class WorkerError(RuntimeError):
    """A self-play process that ended or failed while playing (the message is one line)."""


@dataclass(frozen=True)
class Failure:
    """A worker's reply to an order that raised: the error, in one line."""

    message: str


STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})
"""The signals that stop a run: the learner's process handles them, its workers ignore them."""


@contextlib.contextmanager
def _stop_signals_held() -> Iterator[None]:
    """Hold :data:`STOP_SIGNALS` back in the block: the processes started there begin with
    them blocked (a signal mask survives their start) until :func:`ignore_stop_signals`
    makes them ignore them, and a Ctrl-C or ``SIGTERM`` that arrives meanwhile reaches this
    process when the block ends instead of being lost. A thread other than the main one
    leaves the signals as they are."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def ignore_stop_signals() -> None:
    """A self-play process's first step: ignore :data:`STOP_SIGNALS` (the learner's process
    handles them) and stop holding them back (:func:`_stop_signals_held`)."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def serve(orders: Connection, handle: Callable[[Any], Any]) -> None:
    """A self-play process's loop: answer each order that arrives on ``orders`` with
    ``handle(order)``, or a :class:`Failure` if it raises, until the learner's end of the
    pipe closes."""
    while True:
        try:
            order = orders.recv()
        except (EOFError, OSError):
            return
        try:
            reply = handle(order)
        except Exception as e:  # reported by the learner's process, in one line
            lines = str(e).strip().splitlines()
            reply = Failure(f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__)
        try:
            orders.send(reply)
        except OSError:
            return


class SpawnedWorkers:
    """``n`` daemon processes, started fresh (``spawn``): process ``i`` runs
    ``target(orders, *args(i))``, which calls :func:`ignore_stop_signals` and then
    :func:`serve` on its end of the pipe ``orders``. ``name`` names them."""

    def __init__(self, target: Callable[..., None], args: Callable[[int], tuple[Any, ...]],
                 n: int, name: str) -> None:
        context = multiprocessing.get_context("spawn")
        self.pipes: list[Connection] = []
        self.processes: list[Any] = []
        try:
            with _stop_signals_held():  # the processes begin with them held back
                for i in range(n):
                    ours, theirs = context.Pipe()
                    process = context.Process(target=target, args=(theirs, *args(i)),
                                              name=f"{name}-{i}", daemon=True)
                    process.start()
                    theirs.close()
                    self.pipes.append(ours)
                    self.processes.append(process)
        except BaseException:
            self.close()
            raise

    def ask(self, orders: Sequence[Any], explain: Callable[[int, Failure | None], str]
            ) -> list[Any]:
        """Send ``orders[i]`` to process ``i`` and return the replies in order. A
        :class:`WorkerError` with the message ``explain(i, None)`` as soon as process ``i``
        ends before it replies; once all have replied, one with ``explain(i, failure)`` for
        the first that replied with a :class:`Failure`."""
        for i, order in enumerate(orders):
            try:
                self.pipes[i].send(order)
            except OSError:
                raise WorkerError(explain(i, None)) from None
        replies: dict[int, Any] = {}
        pending = {self.pipes[i]: i for i in range(len(orders))}
        sentinels = {self.processes[i].sentinel: i for i in range(len(orders))}
        while pending:
            for ready in wait(list(pending) + list(sentinels)):
                if ready in sentinels:
                    i = sentinels[ready]
                    if self.pipes[i] in pending and not self.pipes[i].poll():
                        raise WorkerError(explain(i, None))
                elif ready in pending:
                    i = pending.pop(ready)  # type: ignore[call-overload]
                    try:
                        replies[i] = ready.recv()  # type: ignore[union-attr]
                    except (EOFError, OSError):
                        raise WorkerError(explain(i, None)) from None
        for i in range(len(orders)):
            if isinstance(replies[i], Failure):
                raise WorkerError(explain(i, replies[i]))
        return [replies[i] for i in range(len(orders))]

    def close(self) -> None:
        """Close the pipes, give the processes :data:`IDLE_EXIT_SECONDS` to end (an idle
        one does at once), then kill the ones still playing (they ignore ``SIGTERM``)."""
        for pipe in self.pipes:
            pipe.close()
        deadline = time.monotonic() + IDLE_EXIT_SECONDS
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))
        for process in self.processes:
            if process.is_alive():
                process.kill()
        for process in self.processes:
            process.join(STOP_SECONDS)
        self.pipes = []


def _play(orders: Connection, net_config: dict[str, Any], config: SearchConfig,
          parallel_games: int, rules: str, threads: int,
          worker_options: dict[str, Any]) -> None:
    """A worker process: play the games it is sent with the weights sent with them."""
    ignore_stop_signals()
    use_threads(threads)
    worker = SelfPlayWorker(net_config, config, parallel_games, rules, threads=threads,
                            **worker_options)
    serve(orders, lambda order: worker.generate(*order))


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
        self._workers = SpawnedWorkers(
            _play, lambda _: (net_config, config, parallel_games, rules, threads,
                              worker_options or {}), n_workers, "self-play")

    def generate(self, weights: dict[str, torch.Tensor], n_games: int, seed: int
                 ) -> SelfPlayBatch:
        """``n_games`` games split over the workers (worker ``i`` seeded by ``[seed, i]``);
        :class:`WorkerError` if a worker process dies or fails meanwhile."""
        weights = on_cpu(weights)
        orders = [(weights, n, s) for n, s in zip(shares(n_games, self.n_workers),
                                                    worker_seeds(seed, self.n_workers),
                                                    strict=False)]
        return merge(self._workers.ask(orders, _explain))

    def _processes(self) -> list[multiprocessing.process.BaseProcess]:
        return list(self._workers.processes)

    def close(self) -> None:
        """Stop the processes, without waiting for the games they are playing."""
        self._workers.close()


def _explain(worker: int, failure: Failure | None) -> str:
    if failure is None:
        return "a self-play worker process ended while playing (killed, or out of memory)"
    if failure.message.startswith("MemoryError"):
        return ("a self-play worker process ran out of memory (try fewer --parallel-games "
                "or --workers)")
    return f"self-play worker {worker} failed: {failure.message}"


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
