"""A round robin of paired matches, split into small tasks that any number of processes run.

Either game is played the same way: Patchwork, or Patchwork Draft (``game="draft"``).

Every pairing plays the same setups: ``games / 2`` seeds drawn from the tournament seed,
each played twice with the seats swapped (:func:`agents.arena.play_match`). The games are
cut into tasks of :data:`TASK_SEEDS` seeds (:data:`BATCHED_TASK_SEEDS` where an agent
searches its games in one batch) whose agents are seeded from the tournament
seed, the pairing and the task, so the results do not depend on how many processes run
them or in which order (except for agents on a time budget, which search as far as their
clock allows). Every process builds the agents that run a network on the tournament's
device (the CPU unless told otherwise; a spec's own ``@DEVICE`` wins).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from patchwork_env.agents import make, split_device
from patchwork_env.agents.device import use_threads
from patchwork_env.evaluation.arena import GameRecord, play_match
from patchwork_env.evaluation.ratings import bootstrap_elo, fit_elo, wilson_interval

TASK_SEEDS = 2
"""Setups per task (each played twice)."""
BATCHED_TASK_SEEDS = 16
"""Setups per task of a pairing with an agent that searches all its games in one batch
(an ``az`` network: the larger its batch, the cheaper each position's evaluation)."""
BATCHED_KINDS = ("az", "az-playouts", "az-policy")


def task_seeds(a: str, b: str) -> int:
    """Setups per task of the pairing of the specs ``a`` and ``b``."""
    batched = any(split_device(spec)[0].split(":")[0] in BATCHED_KINDS for spec in (a, b))
    return BATCHED_TASK_SEEDS if batched else TASK_SEEDS
MAX_GAMES = 1_000_000
"""Most games per pairing a tournament or a training evaluation plays: every game's moves
are kept in memory (and written to ``results.csv``)."""


@dataclass(frozen=True)
class Task:
    """Some paired games of one pairing."""

    index: int
    """Position in the tournament's task list (results are put back in this order)."""
    pairing: int
    a: str
    b: str
    seeds: tuple[int, ...]
    agent_seeds: tuple[int, int]
    rules: str
    device: str = "cpu"
    """Where the agents that run a network run it (unless their spec says)."""
    game: str = "patchwork"
    """The game played (:data:`patchwork_env.agents.GAMES`)."""


@dataclass
class Pairing:
    """The summary of one pairing, as written to ``results.json``."""

    a: str
    b: str
    games: int
    wins_a: int
    wins_b: int
    win_rate_a: float
    ci_a: list[float]
    mean_score_a: float
    mean_score_b: float
    mean_diff: float
    """Mean of ``a``'s score minus ``b``'s."""


def setup_seeds(seed: int, games: int) -> list[int]:
    """The ``games / 2`` setup seeds every pairing plays (each twice, seats swapped)."""
    return np.random.default_rng(seed).integers(0, 2**31, size=games // 2).tolist()


def make_tasks(specs: Sequence[str], games: int, seed: int, rules: str,
               device: str = "cpu", game: str = "patchwork") -> list[Task]:
    """Every task of a round robin among ``specs`` at ``game``, ``games`` games per
    pairing, its network agents on ``device``."""
    seeds = setup_seeds(seed, games)
    pairs = [(i, j) for i in range(len(specs)) for j in range(i + 1, len(specs))]
    tasks = []
    for p, (i, j) in enumerate(pairs):
        size = task_seeds(specs[i], specs[j])
        for start in range(0, len(seeds), size):
            entropy = np.random.SeedSequence([seed, p, start]).generate_state(2)
            chunk = tuple(seeds[start : start + size])
            tasks.append(Task(len(tasks), p, specs[i], specs[j], chunk,
                              (int(entropy[0]), int(entropy[1])), rules, device, game))
    return tasks


def run_task(task: Task) -> tuple[Task, list[GameRecord]]:
    """Play one task's games."""
    a = make(task.a, task.agent_seeds[0], device=task.device, game=task.game)
    b = make(task.b, task.agent_seeds[1], device=task.device, game=task.game)
    return task, play_match(a, b, task.seeds, task.rules, game=task.game)


def _init_worker() -> None:
    use_threads(1)  # one core per process


def run_tasks(tasks: Sequence[Task], jobs: int) -> Iterator[tuple[Task, list[GameRecord]]]:
    """Run ``tasks`` in up to ``jobs`` processes (in this one if ``jobs`` is 1), yielding each
    as it finishes."""
    jobs = min(jobs, len(tasks))
    if jobs <= 1:
        yield from map(run_task, tasks)
        return
    # spawn, not fork: numba's thread pool, already started here, does not survive a fork
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(jobs, initializer=_init_worker) as pool:
        yield from pool.imap_unordered(run_task, tasks)


def summarise(a: str, b: str, records: Sequence[GameRecord]) -> Pairing:
    """The :class:`Pairing` of ``a`` against ``b`` from its games."""
    n = len(records)
    wins_a = sum(r.a_won for r in records)
    lo, hi = wilson_interval(wins_a, n)
    score_a = np.array([r.score_a for r in records], dtype=float)
    score_b = np.array([r.score_b for r in records], dtype=float)
    return Pairing(a, b, n, wins_a, n - wins_a, wins_a / n, [lo, hi], float(score_a.mean()),
                   float(score_b.mean()), float((score_a - score_b).mean()))


def elo_table(specs: Sequence[str], pairings: Sequence[Pairing], anchor: str,
              samples: int = 1000, seed: int = 0) -> dict[str, dict]:
    """``{spec: {"rating": x, "ci": [lo, hi]}}`` fitted to every game, ``anchor`` at 0."""
    index = {s: i for i, s in enumerate(specs)}
    wins = np.zeros((len(specs), len(specs)))
    for p in pairings:
        wins[index[p.a], index[p.b]] += p.wins_a
        wins[index[p.b], index[p.a]] += p.wins_b
    k = index[anchor]
    ratings = fit_elo(wins, k)
    ci = bootstrap_elo(wins, k, samples, seed)
    return {s: {"rating": float(ratings[i]), "ci": [float(ci[i, 0]), float(ci[i, 1])]}
            for s, i in index.items()}


def round_robin(specs: Sequence[str], games: int, seed: int, rules: str, jobs: int = 1,
                on_task_done: Callable[[Task, list[GameRecord]], None] | None = None,
                device: str = "cpu", game: str = "patchwork"
                ) -> tuple[list[Pairing], dict[int, list[GameRecord]]]:
    """Play the tournament at ``game`` (the agents that run a network on ``device``); the
    pairings in order and every pairing's records by seed."""
    tasks = make_tasks(specs, games, seed, rules, device, game)
    results: list[list[GameRecord]] = [[] for _ in tasks]
    for task, records in run_tasks(tasks, jobs):
        results[task.index] = records
        if on_task_done is not None:
            on_task_done(task, records)
    ordered: dict[int, list[GameRecord]] = {}
    names: dict[int, tuple[str, str]] = {}
    for task in tasks:
        ordered.setdefault(task.pairing, []).extend(results[task.index])
        names[task.pairing] = (task.a, task.b)
    return [summarise(*names[p], ordered[p]) for p in sorted(ordered)], ordered
