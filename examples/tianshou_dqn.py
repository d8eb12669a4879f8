"""DQN on one seat of Patchwork through Tianshou's PettingZoo support.

Follows Tianshou's own recipe for PettingZoo games (its tic-tac-toe example): the AEC env
``patchwork_env.env()`` is wrapped in ``tianshou.env.PettingZooEnv``, a
``MultiAgentOffPolicyAlgorithm`` puts a DQN learner on one seat and Tianshou's masked
random player on the other, ``DummyVectorEnv`` runs a few games side by side, a
``VectorReplayBuffer`` holds the moves of both seats, and Tianshou's off-policy trainer
alternates collection and updates, with a short test after each epoch. A final test
collection (the learner greedy, no exploration) reports the learner's win rate against the
random player, and the replay buffer is checked for NaNs and for integer scores and winners
in its infos (what once broke Tianshou's trainer: infos empty during the game, with the
winner's name only at the end, left ``None`` in the buffer, reported as NaNs). Needs the
``tianshou`` extra::

    pip install -e ".[tianshou]"
    python examples/tianshou_dqn.py --smoke            # a tiny run, well under a minute
    python examples/tianshou_dqn.py                    # 5 epochs of 4,000 moves
    python examples/tianshou_dqn.py --epochs 20 --steps-per-epoch 10000 --learner-seat 1

Both players' moves count as environment steps (about 45 a game, half of them the
learner's). Illegal moves cannot happen: the learner's Q-values and its exploration are
masked by ``action_mask``, as is the random player.

Targets: Patchwork does not alternate turns (the player behind on the time track moves
again), so the position after a move is often the opponent's, and one-step targets would
rate the learner's move by its network's value of the opponent's view of the board. The
n-step horizon is therefore longer than any game (``--n-step 128``), so each of the
learner's moves is trained on the discounted result of its game, and within a finished game
nothing bootstraps from a position the opponent is to move in; the price is Monte Carlo
variance.

Cost and what to expect, measured on 2 CPU cores shared with other work (torch on one
thread): Tianshou's buffer compiles its kernels on start (about 7 s); the default run
(20,000 moves, 2,000 gradient steps, a 20-game test after each epoch, 100 test games at the
end) took under 4 minutes, ``--smoke`` about 30 s. Tianshou drives the games one Python step
at a time, far slower than the project's batched envs (``examples/sb3_maskable_ppo.py``).
A few minutes of DQN give an agent no better than random: the default run won 39 of 100
test games against random (95% CI 30%..49%), a run of 25,000 moves and 6,250 gradient
steps 51 of 100, and on the same test games the random player wins 111 of 200 from seat 0
and the untrained network 104 of 200. The greedy policy of a barely fitted Q-network is an
arbitrary one, and such policies often do worse than random. ``train.py`` trains an agent
worth having.
"""

from __future__ import annotations

import argparse
import logging
import time
from typing import Any

import numpy as np

try:
    import torch
    from tianshou.algorithm import (
        DQN,
        MARLRandomDiscreteMaskedOffPolicyAlgorithm,
        MultiAgentOffPolicyAlgorithm,
    )
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, ReplayBuffer, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net
    from tianshou.utils.torch_utils import policy_within_training_step
except ImportError:
    raise SystemExit('this example needs Tianshou: pip install -e ".[tianshou]"') from None

import patchwork_env
from patchwork_env.evaluation.ratings import wilson_interval

AGENTS = ("player_0", "player_1")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epochs", type=int, default=5, help="training epochs (5)")
    p.add_argument("--steps-per-epoch", type=int, default=4000,
                   help="environment steps (moves of both players) per epoch (4000)")
    p.add_argument("--seed", type=int, default=0, help="seed of games, networks, exploration")
    p.add_argument("--learner-seat", type=int, choices=(0, 1), default=0,
                   help="the seat DQN plays; random plays the other (0)")
    p.add_argument("--envs", type=int, default=4, help="training games side by side (4)")
    p.add_argument("--test-games", type=int, default=100,
                   help="games of the final test against random (100)")
    p.add_argument("--hidden", type=int, nargs="+", default=[256, 256],
                   help="hidden layer widths of the Q-network (256 256)")
    p.add_argument("--lr", type=float, default=5e-4, help="Adam learning rate (5e-4)")
    p.add_argument("--gamma", type=float, default=0.99, help="discount per move (0.99)")
    p.add_argument("--n-step", type=int, default=128,
                   help="n-step return horizon; beyond the longest game by default (128)")
    p.add_argument("--smoke", action="store_true",
                   help="1 epoch of 400 steps, a small network, 4 test games (a quick check)")
    args = p.parse_args(argv)
    if args.smoke:
        args.epochs, args.steps_per_epoch, args.hidden, args.test_games = 1, 400, [64], 4
        args.envs = 2
    if min(args.epochs, args.steps_per_epoch, args.envs, args.test_games, args.n_step,
           *args.hidden) < 1:
        p.error("--epochs, --steps-per-epoch, --envs, --test-games, --n-step and --hidden "
                "must be positive")
    if args.seed < 0 or not 0.0 <= args.gamma <= 1.0:
        p.error("--seed must not be negative and --gamma must be in [0, 1]")
    return args


def make_env() -> PettingZooEnv:
    """One Patchwork game as Tianshou sees it: observations ``{agent_id, obs, mask}``."""
    return PettingZooEnv(patchwork_env.env())


def build(args: argparse.Namespace, env: PettingZooEnv) -> tuple[MultiAgentOffPolicyAlgorithm,
                                                                 DQN]:
    """The two-seat algorithm (DQN on ``args.learner_seat``, random on the other) and the
    DQN learner in it."""
    obs_space = env.observation_space["observation"]
    net = Net(state_shape=obs_space.shape, action_shape=env.action_space.n,
              hidden_sizes=args.hidden)
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space,
                                     observation_space=obs_space,
                                     eps_training=1.0, eps_inference=0.0)
    learner = DQN(policy=policy, optim=AdamOptimizerFactory(lr=args.lr), gamma=args.gamma,
                  n_step_return_horizon=args.n_step, target_update_freq=200)
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    seats = [learner, opponent] if args.learner_seat == 0 else [opponent, learner]
    return MultiAgentOffPolicyAlgorithm(algorithms=seats, env=env), learner


def check_buffer(buffer: ReplayBuffer) -> str:
    """Raise if the buffer holds NaNs or non-integer scores or winners in its infos; else a
    one-line summary."""
    if buffer.hasnull():
        raise RuntimeError(f"NaNs in the replay buffer: {buffer.isnull()}")
    info = buffer.info
    fields = {"winner": info.winner, **{f"scores.{a}": info.scores[a] for a in AGENTS}}
    for name, values in fields.items():
        if not np.issubdtype(np.asarray(values).dtype, np.integer):
            raise RuntimeError(f"info {name} is stored as {np.asarray(values).dtype}")
    return (f"buffer: {len(buffer):,} transitions, no NaNs, infos scores and winner stored "
            f"as {np.asarray(info.winner).dtype}")


def wins_of(stats: CollectStats, seat: int) -> tuple[int, int]:
    """(wins, games) of ``seat`` in a test collection: a win is a return of +1."""
    returns = np.asarray(stats.returns)[:, seat]
    return int((returns > 0).sum()), len(returns)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Train, test against random, and return the numbers printed."""
    args = parse_args(argv)
    start = time.perf_counter()
    torch.set_num_threads(1)  # small batches: one thread is faster, above all on shared cores
    # Returns have one column per seat; the trainer is told to keep the learner's, but the
    # collectors' statistics warn about the two columns at every collection.
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)
    np.random.seed(args.seed)  # the random player and the exploration draw from NumPy
    torch.manual_seed(args.seed)

    env = make_env()
    train_envs = DummyVectorEnv([make_env for _ in range(args.envs)])
    test_envs = DummyVectorEnv([make_env for _ in range(args.envs)])
    train_envs.seed(args.seed)  # game i starts as Game.new(seed + i), then keeps drawing
    test_envs.seed(args.seed + 10_000)  # other games than the training ones
    algorithm, learner = build(args, env)

    buffer = VectorReplayBuffer(max(20_000, args.epochs * args.steps_per_epoch), args.envs)
    train_collector = Collector[CollectStats](algorithm, train_envs, buffer,
                                              exploration_noise=True)
    test_collector = Collector[CollectStats](algorithm, test_envs, exploration_noise=False)
    batch_size = 64
    with policy_within_training_step(algorithm.policy):  # the learner explores (eps 1)
        train_collector.collect(n_step=batch_size * args.envs, reset_before_collect=True)

    total = args.epochs * args.steps_per_epoch
    seat = args.learner_seat

    def explore(epoch: int, env_step: int) -> None:
        # epsilon-greedy: from 1 down to 0.05 over the first half of training
        learner.policy.set_eps_training(max(0.05, 1.0 - 1.9 * env_step / total))

    result = algorithm.run_training(OffPolicyTrainerParams(
        training_collector=train_collector,
        test_collector=test_collector,
        max_epochs=args.epochs,
        epoch_num_steps=args.steps_per_epoch,
        collection_step_num_env_steps=10 * args.envs,
        update_step_num_gradient_steps_per_sample=0.1,  # one gradient step per 10 moves
        batch_size=batch_size,
        test_step_num_episodes=4 if args.smoke else 20,
        training_fn=explore,
        multi_agent_return_reduction=lambda returns: returns[:, seat],
        show_progress=False,
    ))
    trained = time.perf_counter() - start
    summary = check_buffer(buffer)
    print(f"trained: {result.train_step:,} moves in {trained:.0f} s; {summary}")

    test_collector.reset()
    wins, games = wins_of(test_collector.collect(n_episode=args.test_games), seat)
    lo, hi = wilson_interval(wins, games)
    print(f"learner ({AGENTS[seat]}, DQN) against random: {wins} of {games} games won "
          f"({wins / games:.1%}, 95% CI {lo:.1%}..{hi:.1%})")
    wall = time.perf_counter() - start
    print(f"wall time {wall:.0f} s")
    return {"wins": wins, "games": games, "moves": result.train_step, "wall_s": wall}


if __name__ == "__main__":
    main()
