"""OpenSpiel's MCTS bot against the project's greedy agent, through OpenSpiel's own
evaluation loop (``evaluate_bots``) on the registered game ``python_patchwork``.

The bots swap seats every game; the setup (circle and first player) is dealt by OpenSpiel
from the game's chance nodes. Needs the ``openspiel`` extra::

    pip install -e ".[openspiel]"
    python examples/openspiel_mcts_vs_greedy.py --games 6 --simulations 400
    python examples/openspiel_mcts_vs_greedy.py --smoke   # one tiny game, for CI

``--evaluator engine`` (the default) plays MCTS's random rollouts inside the compiled
engine; ``--evaluator openspiel`` uses OpenSpiel's ``RandomRolloutEvaluator``, the same
rollouts stepped through the pyspiel state, tens of times slower.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

try:
    from open_spiel.python.algorithms import evaluate_bots, mcts
except ImportError:
    raise SystemExit('this example needs OpenSpiel: pip install -e ".[openspiel]"') from None

from patchwork_env import agents
from patchwork_env.integrations import openspiel as pw


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=6, help="games to play (default 6)")
    p.add_argument("--simulations", type=int, default=400,
                   help="MCTS simulations per move (default 400)")
    p.add_argument("--rollouts", type=int, default=8,
                   help="random rollouts per MCTS leaf (default 8)")
    p.add_argument("--evaluator", choices=("engine", "openspiel"), default="engine",
                   help="where the rollouts run (default engine)")
    p.add_argument("--rules", default="default", help="rules preset (default 'default')")
    p.add_argument("--seed", type=int, default=0, help="seed of the bots and the setups")
    p.add_argument("--smoke", action="store_true",
                   help="one game with 8 simulations and 1 rollout (a quick check)")
    args = p.parse_args(argv)
    if args.smoke:
        args.games, args.simulations, args.rollouts = 1, 8, 1
    if min(args.games, args.simulations, args.rollouts) < 1:
        p.error("--games, --simulations and --rollouts must be at least 1")
    return args


def make_evaluator(kind: str, rollouts: int, seed: int) -> mcts.Evaluator:
    """The MCTS leaf evaluator: engine playouts or OpenSpiel's random rollouts."""
    if kind == "engine":
        return pw.PlayoutEvaluator(rollouts, seed=seed)
    return mcts.RandomRolloutEvaluator(rollouts, np.random.RandomState(seed))


def main(argv: list[str] | None = None) -> int:
    """Play the match and print one line per game and a summary."""
    args = parse_args(argv)
    game = pw.load_game(args.rules)
    chance_rng = np.random.RandomState(args.seed)
    mcts_wins = 0
    print(f"{game}: MCTS ({args.simulations} simulations, {args.rollouts} rollouts, "
          f"{args.evaluator} evaluator) vs greedy, "
          f"{args.games} game{'s' if args.games > 1 else ''}")
    start = time.perf_counter()
    for i in range(args.games):
        seed = args.seed + i
        search = mcts.MCTSBot(game, uct_c=2.0, max_simulations=args.simulations,
                              evaluator=make_evaluator(args.evaluator, args.rollouts, seed),
                              random_state=np.random.RandomState(seed))
        seat = i % 2
        greedy = pw.AgentBot(agents.make("greedy", seed=seed), player_id=1 - seat)
        bots = [search, greedy] if seat == 0 else [greedy, search]
        state = game.new_initial_state()
        t = time.perf_counter()
        returns = evaluate_bots.evaluate_bots(state, bots, chance_rng)
        won = returns[seat] > 0
        mcts_wins += won
        score = state.engine_game.scores()
        print(f"game {i + 1}: MCTS as player {seat} {'wins' if won else 'loses'}, "
              f"score {score[seat]} to {score[1 - seat]} "
              f"({time.perf_counter() - t:.1f} s)")
    print(f"MCTS {mcts_wins} - {args.games - mcts_wins} greedy "
          f"in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
