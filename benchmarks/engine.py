"""Engine throughput and memory: uniform random play with the batch engine.

Prints, for batches of 1, 64, 1024 and 4096 games, games/s and plies/s on one core and on
all cores, for two ways of playing uniformly at random:

* ``mask``: ``legal_mask()`` + a uniform draw from the mask + ``step`` + reset of finished
  games (what an agent that reads the mask costs);
* ``direct``: ``random_actions()`` (the same distribution without building the mask) +
  ``step`` + reset of finished games (what rollouts cost).

Then the median latency of ``Game.legal_actions()`` + ``Game.step()`` at batch 1, and the
bytes of state per game. Each figure is the median of ``--repeats`` timed runs.

    python benchmarks/engine.py [--seconds 1.0] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numba
import numpy as np

from patchwork_env import Game, GameBatch
from patchwork_env.engine.batch import sample_legal
from patchwork_env.engine.kernels import STATE_DTYPE

BATCH_SIZES = (1, 64, 1024, 4096)


def play_for(batch: GameBatch, mode: str, seconds: float, rng: np.random.Generator
             ) -> tuple[float, float]:
    """Play random moves for about ``seconds``; returns (games/s, plies/s)."""
    mask = np.empty((len(batch), 2026), np.bool_)
    plies = games = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(20):
            if mode == "mask":
                actions = sample_legal(batch.legal_mask(out=mask), rng)
            else:
                actions = batch.random_actions(rng)
            batch.step(actions, check=False)
            plies += len(batch)
            games += len(batch.reset_done(rng))
    return games / elapsed, plies / elapsed


def throughput_table(seconds: float, repeats: int) -> list[tuple]:
    rows = []
    threads_all = numba.config.NUMBA_NUM_THREADS
    for threads in sorted({1, threads_all}):
        numba.set_num_threads(threads)
        for mode in ("mask", "direct"):
            for n in BATCH_SIZES:
                batch = GameBatch.new(n, seed=0)
                rng = np.random.default_rng(0)
                play_for(batch, mode, min(0.2, seconds), rng)  # warm up (compiles at first)
                runs = [play_for(batch, mode, seconds, rng) for _ in range(repeats)]
                games = statistics.median(r[0] for r in runs)
                plies = statistics.median(r[1] for r in runs)
                rows.append((threads, mode, n, games, plies))
                print(f"  threads={threads} {mode:6s} batch={n:5d}: {games:12,.0f} games/s "
                      f"{plies:14,.0f} plies/s", flush=True)
    return rows


def single_game_latency(samples: int = 20000) -> float:
    """Median microseconds of ``legal_actions()`` + ``step()`` on one Game."""
    rng = np.random.default_rng(1)
    game = Game.new(seed=1)
    times = []
    seed = 1
    for _ in range(samples):
        if game.is_over:
            seed += 1
            game = Game.new(seed=seed)
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
    args = parser.parse_args()
    if args.seconds <= 0 or args.repeats < 1:
        parser.error("--seconds must be > 0 and --repeats >= 1")

    print(f"cores: {os.cpu_count()}, numba threads: {numba.config.NUMBA_NUM_THREADS}")
    rows = throughput_table(args.seconds, args.repeats)
    single_game_latency(2000)  # warm up
    latency = single_game_latency()

    print("\n| threads | play | batch | games/s | plies/s |")
    print("|---:|---|---:|---:|---:|")
    for threads, mode, n, games, plies in rows:
        print(f"| {threads} | {mode} | {n} | {games:,.0f} | {plies:,.0f} |")
    print(f"\nGame.legal_actions() + Game.step(), median: {latency:.2f} µs")
    print(f"state per game: {STATE_DTYPE.itemsize} bytes")


if __name__ == "__main__":
    main()
