"""Search-guided self-play on Ray: the trainer's self-play workers run as Ray actors.

Runs ``train.py``'s search-guided trainer (``patchwork_env.training.az``) with its
self-play split over ``--workers`` Ray actors (each a ``SelfPlayWorker`` on one CPU,
batching its own network calls); the learner stays in this process. After training, the
network with its search plays a few games against ``random`` in the project's own engine
(a ``Game``, which raises on an illegal move). Needs the ``rllib`` extra (for Ray)::

    pip install -e ".[rllib]"
    python examples/ray_az_selfplay.py --smoke                 # 1 tiny iteration, 2 actors
    python examples/ray_az_selfplay.py --iterations 16 --workers 2

On a Ray cluster the same script runs unchanged. Install the project with the ``rllib``
extra on every node (the same Python, Ray and project versions everywhere), then::

    # on the head node
    ray start --head --port=6379
    # on every other node
    ray start --address=HEAD:6379          # HEAD: the head node's address
    # on the head node
    python examples/ray_az_selfplay.py --address auto --workers N --iterations 60

Each actor takes one CPU (``N`` up to the cluster's CPUs, less one for the learner); for a
given ``N`` the games are the same as with ``N`` worker processes on one machine
(``train.py --workers N``). The run folder (checkpoint, ``net.pt``, metrics) is written on
the node that runs the script; ``--resume`` continues it, on the cluster or off it.
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile
import time

if importlib.util.find_spec("ray") is None:
    raise SystemExit('this example needs Ray: pip install -e ".[rllib]"')

from patchwork_env import Game, agents
from patchwork_env.training.az import AZOptions, run_az
from patchwork_env.training.az.trainer import NET_FILE

SMOKE = {"iterations": 1, "games_per_iteration": 4, "parallel_games": 2, "simulations": 3,
         "max_considered": 4, "top_k": 8, "hidden": 32, "teacher": "", "playout_weight": 0.0,
         "eval_every": 0}
"""A run of seconds: one iteration of 4 tiny games, a small network, no warm start."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iterations", type=int, default=16, help="iterations (16)")
    p.add_argument("--workers", type=int, default=2, help="self-play actors, one CPU each (2)")
    p.add_argument("--address", default="local",
                   help="a Ray cluster to join ('auto' or HEAD:6379); default: a local Ray")
    p.add_argument("--run-dir", default="runs/az-ray",
                   help="the run folder (runs/az-ray; --smoke: a temporary folder)")
    p.add_argument("--resume", action="store_true", help="continue the run in --run-dir")
    p.add_argument("--games", type=int, default=4,
                   help="games against random after training (4)")
    p.add_argument("--seed", type=int, default=0, help="seed of the run and the final games")
    p.add_argument("--smoke", action="store_true",
                   help="1 iteration of 4 small games, a small network, 2 games (a quick check)")
    args = p.parse_args(argv)
    if min(args.iterations, args.workers, args.games) < 1:
        p.error("--iterations, --workers and --games must be positive")
    if args.seed < 0:
        p.error("--seed must not be negative")
    if args.smoke:
        args.games = 2
    return args


def play_random(net_file: str, games: int, seed: int) -> int:
    """Wins of the network (searching with 8 evaluations a move) against ``random`` over
    ``games`` games in the engine, seats alternating."""
    player = agents.make(f"az:{net_file}:8", seed=seed)
    opponent = agents.make("random", seed=seed)
    wins = 0
    for k in range(games):
        game, seat = Game.new(seed=seed + k), k % 2
        while not game.is_over:
            mover = player if game.to_move == seat else opponent
            game.step(mover.act_game(game))
        wins += game.winner == seat
    return wins


def main(argv: list[str] | None = None) -> None:
    """Train with self-play on Ray actors, then play against random."""
    args = parse_args(argv)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        settings = {"iterations": args.iterations, **(SMOKE if args.smoke else {})}
        opts = AZOptions(workers=args.workers, ray_address=args.address, seed=args.seed,
                         resume=args.resume,
                         run_dir=f"{scratch}/run" if args.smoke else args.run_dir, **settings)
        row = run_az(opts)
        wins = play_random(str(opts.folder() / NET_FILE), args.games, args.seed)
    print(f"{row['games']} games of self-play on {args.workers} Ray actors; against random "
          f"the network won {wins} of {args.games} (no illegal move); "
          f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
