"""Engine throughput and memory: uniform random play with the batch engine.

Prints, for each game (Patchwork, and Patchwork Draft: ``--game``) and for batches of 1,
64, 1024 and 4096 games, games/s and plies/s on one core and on all cores, for two ways of
playing uniformly at random:

* ``mask``: ``legal_mask()`` + a uniform draw from the mask + ``step`` + reset of finished
  games (what an agent that reads the mask costs);
* ``direct``: ``random_actions()`` (the same distribution without building the mask) +
  ``step`` + reset of finished games (what rollouts cost).

Then the median latency of ``legal_actions()`` + ``step()`` on one game, and the bytes of
state per game. Each figure is the median of ``--repeats`` timed runs.

    python benchmarks/engine.py [--seconds 1.0] [--repeats 3] [--game both]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any, NamedTuple

import numba
import numpy as np

from patchwork_env import Game, GameBatch
from patchwork_env.data.actions import N_ACTIONS
from patchwork_env.data.draft_actions import N_DRAFT_ACTIONS
from patchwork_env.engine.batch import sample_legal
from patchwork_env.engine.draft_batch import DraftBatch, sample_draft_legal
from patchwork_env.engine.draft_kernels import DRAFT_STATE_DTYPE
from patchwork_env.engine.kernels import STATE_DTYPE
from patchwork_env.views.draft_game import DraftGame

BATCH_SIZES = (1, 64, 1024, 4096)


class Bench(NamedTuple):
    """What the benchmark needs of one game."""

    batch: Any
    game: Any
    n_actions: int
    sample: Any
    state_dtype: np.dtype


GAMES = {
    "patchwork": Bench(GameBatch, Game, N_ACTIONS, sample_legal, STATE_DTYPE),
    "draft": Bench(DraftBatch, DraftGame, N_DRAFT_ACTIONS, sample_draft_legal,
                   DRAFT_STATE_DTYPE),
}


def play_for(batch: Any, bench: Bench, mode: str, seconds: float, rng: np.random.Generator
             ) -> tuple[float, float]:
    """Play random moves for about ``seconds``; returns (games/s, plies/s)."""
    mask = np.empty((len(batch), bench.n_actions), np.bool_)
    plies = games = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(20):
            if mode == "mask":
                actions = bench.sample(batch.legal_mask(out=mask), rng)
            else:
                actions = batch.random_actions(rng)
            batch.step(actions, check=False)
            plies += len(batch)
            games += len(batch.reset_done(rng))
    return games / elapsed, plies / elapsed


def throughput_table(name: str, seconds: float, repeats: int) -> list[tuple]:
    bench = GAMES[name]
    rows = []
    threads_all = numba.config.NUMBA_NUM_THREADS
    for threads in sorted({1, threads_all}):
        numba.set_num_threads(threads)
        for mode in ("mask", "direct"):
            for n in BATCH_SIZES:
                batch = bench.batch.new(n, seed=0)
                rng = np.random.default_rng(0)
                play_for(batch, bench, mode, min(0.2, seconds), rng)  # warm up (compiles)
                runs = [play_for(batch, bench, mode, seconds, rng) for _ in range(repeats)]
                games = statistics.median(r[0] for r in runs)
                plies = statistics.median(r[1] for r in runs)
                rows.append((name, threads, mode, n, games, plies))
                print(f"  {name} threads={threads} {mode:6s} batch={n:5d}: {games:12,.0f} "
                      f"games/s {plies:14,.0f} plies/s", flush=True)
    return rows


def single_game_latency(new_game: Any, samples: int = 20000) -> float:
    """Median microseconds of ``legal_actions()`` + ``step()`` on one game."""
    rng = np.random.default_rng(1)
    game = new_game(seed=1)
    times = []
    seed = 1
    for _ in range(samples):
        while game.is_over:  # a finished game is replaced by a new one
            seed += 1
            game = new_game(seed=seed)
        choice = rng.random()
        t0 = time.perf_counter_ns()
        legal = game.legal_actions()
        action = legal[int(choice * len(legal))]
        game.step(action)
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="length of one timed run")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per figure")
    parser.add_argument("--game", choices=["patchwork", "draft", "both"], default="both",
                        help="which game to measure: Patchwork, Patchwork Draft or both")
    args = parser.parse_args()
    if args.seconds <= 0 or args.repeats < 1:
        parser.error("--seconds must be > 0 and --repeats >= 1")
    names = list(GAMES) if args.game == "both" else [args.game]

    print(f"cores: {os.cpu_count()}, numba threads: {numba.config.NUMBA_NUM_THREADS}")
    rows = [row for name in names for row in throughput_table(name, args.seconds, args.repeats)]
    latencies = {}
    for name in names:
        single_game_latency(GAMES[name].game.new, 2000)  # warm up
        latencies[name] = single_game_latency(GAMES[name].game.new)

    print("\n| game | threads | play | batch | games/s | plies/s |")
    print("|---|---:|---|---:|---:|---:|")
    for name, threads, mode, n, games, plies in rows:
        print(f"| {name} | {threads} | {mode} | {n} | {games:,.0f} | {plies:,.0f} |")
    print()
    for name in names:
        bench = GAMES[name]
        print(f"{name}: {bench.game.__name__}.legal_actions() + step(), median: "
              f"{latencies[name]:.2f} µs; state per game: {bench.state_dtype.itemsize} bytes")


if __name__ == "__main__":
    main()
