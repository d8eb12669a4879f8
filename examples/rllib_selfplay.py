"""PPO self-play on Ray RLlib: one shared, action-masked policy plays both seats.

Trains RLlib's PPO (new API stack) on the multi-agent env ``patchwork`` with
``patchwork_env.integrations.rllib.MaskedPPOModule``; the policy mapping sends ``player_0`` and
``player_1`` to the same module, so every move of every game trains it. After training,
the policy plays a few games against ``random`` in the project's own engine (a ``Game``,
not the RLlib env): the engine raises on an illegal move, so a finished run shows the
policy plays only legal ones. Needs the ``rllib`` extra::

    pip install -e ".[rllib]"
    python examples/rllib_selfplay.py --smoke                  # 2 tiny iterations
    python examples/rllib_selfplay.py --iterations 20 --num-env-runners 2

Each iteration prints: the mean episode return (the sum over both players, so 0 in a
zero-sum game unless an illegal move ended a game), ``player_0``'s mean return (the seat
balance of the self-play games), the mean episode length (moves of both players), the
illegal moves sampled, the environment steps so far and the iteration's wall time.

On a Ray cluster the same script runs unchanged. Install the project with the ``rllib``
extra on every node (the same Python, Ray and project versions everywhere), then::

    # on the head node
    ray start --head --port=6379
    # on every other node
    ray start --address=HEAD:6379          # HEAD: the head node's address
    # on the head node (or any node of the cluster)
    python examples/rllib_selfplay.py --address auto --num-env-runners N

Each env runner takes one CPU (``N`` up to the cluster's CPUs, less one for the learner);
``ray status`` shows the nodes and their CPUs, ``ray stop`` on every node ends the cluster.
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

try:
    import ray

    from patchwork_env.integrations import rllib as pw
except ImportError:
    raise SystemExit('this example needs Ray RLlib: pip install -e ".[rllib]"') from None

from patchwork_env import Game, agents


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iterations", type=int, default=20, help="training iterations (20)")
    p.add_argument("--num-env-runners", type=int, default=1,
                   help="sampling workers, one CPU each; 0 samples in the driver (1)")
    p.add_argument("--train-batch-size", type=int, default=4000,
                   help="environment steps per iteration (4000)")
    p.add_argument("--hidden", type=int, nargs="+", default=[256, 256],
                   help="layer widths of the policy and value networks (256 256)")
    p.add_argument("--games", type=int, default=10,
                   help="games against random after training (10)")
    p.add_argument("--seed", type=int, default=0, help="seed of RLlib and the final games")
    p.add_argument("--address", default=None,
                   help="a Ray cluster to join ('auto' or HEAD:6379); default: a local Ray")
    p.add_argument("--num-cpus", type=int, default=None,
                   help="CPUs of the local Ray (default: all); not with --address")
    p.add_argument("--smoke", action="store_true",
                   help="2 iterations of 256 steps, a small network, 2 games (a quick check)")
    args = p.parse_args(argv)
    if args.smoke:
        args.iterations, args.train_batch_size, args.hidden, args.games = 2, 256, [64], 2
    if min(args.iterations, args.train_batch_size, args.games, *args.hidden) < 1:
        p.error("--iterations, --train-batch-size, --games and --hidden must be positive")
    if args.num_env_runners < 0 or args.seed < 0:
        p.error("--num-env-runners and --seed must not be negative")
    if args.address and args.num_cpus:
        p.error("--num-cpus is for a local Ray; a cluster has its own CPUs")
    return args


def build(args: argparse.Namespace) -> Any:
    """The PPO algorithm of the run."""
    minibatch = max(64, args.train_batch_size // 8)
    config = pw.selfplay_config(num_env_runners=args.num_env_runners,
                                train_batch_size=args.train_batch_size,
                                minibatch_size=minibatch,
                                num_epochs=1 if args.smoke else 4,
                                hidden=tuple(args.hidden), seed=args.seed)
    return pw.build_algo(config)


def stat(result: dict[str, Any], *keys: str) -> float:
    """``result[k1][k2]...`` as a float, NaN where missing (no episode ended yet)."""
    value: Any = result
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return math.nan
        value = value[key]
    return float(value)


def train(algo: Any, iterations: int) -> None:
    """Run ``iterations`` training iterations, one line each."""
    print(f"{'iter':>4} {'return':>7} {'p0 ret':>7} {'length':>6} {'illegal':>7} "
          f"{'env steps':>9} {'time s':>7}")
    for _ in range(iterations):
        r = algo.train()
        runners = r.get("env_runners", {})
        print(f"{r['training_iteration']:>4} {stat(runners, 'episode_return_mean'):>7.3f} "
              f"{stat(runners, 'agent_episode_returns_mean', 'player_0'):>7.3f} "
              f"{stat(runners, 'episode_len_mean'):>6.1f} "
              f"{stat(runners, 'illegal_moves'):>7.0f} "
              f"{stat(r, 'num_env_steps_sampled_lifetime'):>9.0f} "
              f"{stat(r, 'time_this_iter_s'):>7.1f}", flush=True)


def play_random(module: Any, games: int, seed: int) -> tuple[int, int]:
    """(wins, moves) of ``module`` against ``random`` over ``games`` games in the engine,
    seats alternating; an illegal move would raise ``ValueError`` in ``Game.step``."""
    opponent = agents.make("random", seed=seed)
    wins = moves = 0
    for k in range(games):
        game, seat = Game.new(seed=seed + k), k % 2
        while not game.is_over:
            if game.to_move == seat:
                game.step(pw.module_action(module, game))
                moves += 1
            else:
                game.step(opponent.act_game(game))
        wins += game.winner == seat
    return wins, moves


def main(argv: list[str] | None = None) -> None:
    """Train, then play against random."""
    args = parse_args(argv)
    start = time.perf_counter()
    if args.address:
        ray.init(address=args.address)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False)
    print(f"Ray: {ray.cluster_resources().get('CPU', 0):.0f} CPUs on "
          f"{len(ray.nodes())} node(s); {args.num_env_runners} env runner(s)")
    algo = build(args)
    try:
        train(algo, args.iterations)
        wins, moves = play_random(algo.get_module(pw.SHARED_MODULE), args.games, args.seed)
        print(f"against random: {wins} of {args.games} games won, {moves} moves, all legal")
    finally:
        algo.stop()
        ray.shutdown()
    print(f"wall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
