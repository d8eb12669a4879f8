"""MCTS throughput on one core: simulations (full random rollouts) per second.

    python benchmarks/mcts.py [--simulations N] [--positions K] [--seed S]

Searches ``N`` simulations from ``K`` positions of each stage of the game (taken from
greedy-against-greedy games: the opening, the middle and the end) and prints the rate per
stage and overall, next to the rate of bare random playouts of the batch engine from the
same positions (the cost of the rollouts alone). Numba runs on one thread.
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np

from patchwork_env import GameBatch
from patchwork_env.agents.greedy import GreedyAgent
from patchwork_env.agents.mcts.agent import MCTSAgent

STAGES = {"opening": 0.0, "middle": 0.4, "end": 0.75}
"""Stage name and how far into a game (share of its moves) its positions are taken."""


def sample_positions(k: int, seed: int) -> dict[str, GameBatch]:
    """``k`` positions per stage, from greedy self-play games with random setups."""
    greedy = GreedyAgent()
    games = GameBatch.new(k, seed=seed)
    history = [games.state.copy()]
    while not games.done.all():
        rows = np.flatnonzero(~games.done)
        actions = np.full(len(games), -1, np.int64)
        actions[rows] = greedy.act(games, rows)
        games.step(actions)
        history.append(games.state.copy())
    lengths = [sum(not h[i]["to_move"] < 0 for h in history) for i in range(k)]
    out = {}
    for name, share in STAGES.items():
        picks = [history[int(share * n)][i] for i, n in enumerate(lengths)]
        out[name] = GameBatch(np.array(picks), games.rules)
    return out


def search_time(positions: GameBatch, simulations: int, seed: int
                ) -> tuple[float, float, float]:
    """Simulations run by ``mcts:simulations`` over the positions (none where a position
    leaves no choice), and the wall-clock and CPU seconds they took."""
    agent = MCTSAgent(str(simulations), seed=seed)
    searched = wall = cpu = 0.0
    for row in range(len(positions)):
        start, start_cpu = time.perf_counter(), time.process_time()
        agent.act(positions, np.array([row]))
        wall += time.perf_counter() - start
        cpu += time.process_time() - start_cpu
        searched += agent.last_simulations
    return searched, wall, cpu


def per_second(count: float, seconds: float) -> str:
    """``count / seconds`` for a table, or a dash where nothing was counted."""
    return f"{count / seconds:,.0f}" if count and seconds > 0 else "-"


def playout_rate(positions: GameBatch, repeats: int) -> float:
    """Random playouts per second of the batch engine from the positions."""
    batch = GameBatch(np.repeat(positions.state, repeats), positions.rules)
    start = time.perf_counter()
    batch.playout(0)
    return len(batch) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--simulations", type=int, default=20_000)
    parser.add_argument("--positions", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.simulations < 1 or args.positions < 1:
        parser.error("--simulations and --positions must be at least 1")
    numba.set_num_threads(1)
    positions = sample_positions(args.positions, args.seed)
    search_time(positions["opening"][:1], 100, 0)  # compile / load the cached code
    playout_rate(positions["opening"][:1], 1)
    print(f"MCTS on one core, {args.simulations} simulations per search; rates per second of"
          " wall-clock time and of CPU time (they differ when other programs share the core)")
    print(f"{'stage':<8} {'searches':>8} {'sims/s wall':>12} {'sims/s CPU':>11} "
          f"{'random playouts/s':>18}")
    sims = wall = cpu = 0.0
    for name, batch in positions.items():
        searched, seconds, cpu_seconds = search_time(batch, args.simulations, args.seed)
        sims, wall, cpu = sims + searched, wall + seconds, cpu + cpu_seconds
        print(f"{name:<8} {int(searched // args.simulations):>8d} "
              f"{per_second(searched, seconds):>12} {per_second(searched, cpu_seconds):>11} "
              f"{playout_rate(batch, 500):>18,.0f}")
    print(f"{'overall':<8} {'':>8} {per_second(sims, wall):>12} {per_second(sims, cpu):>11}")


if __name__ == "__main__":
    main()
