"""The native Gymnasium vector env: many games in one compiled batch, masks in ``info``.

Builds ``patchwork_env/Patchwork-v0`` with ``gymnasium.make_vec(...,
vectorization_mode="vector_entry_point")``, plays uniformly random legal moves (read from
``info["action_mask"]``) against the greedy player of the agent registry, and prints the
learner's record and the speed. ``--smoke`` plays a few steps.

    python examples/gymnasium_vector.py [--envs 256] [--steps 2000] [--seed 0] [--smoke]
"""

from __future__ import annotations

import argparse
import time

import gymnasium
import numpy as np

import patchwork_env  # noqa: F401  (registers the environments)
from patchwork_env.agents import make_opponent
from patchwork_env.engine.batch import sample_legal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=256)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="a tiny run, for CI")
    args = parser.parse_args()
    n, steps = (8, 50) if args.smoke else (args.envs, args.steps)

    envs = gymnasium.make_vec("patchwork_env/Patchwork-v0", num_envs=n,
                              vectorization_mode="vector_entry_point",
                              opponent=make_opponent("greedy", seed=args.seed))
    rng = np.random.default_rng(args.seed)
    _, info = envs.reset(seed=args.seed)
    wins = losses = 0
    start = time.perf_counter()
    for _ in range(steps):
        masks = info["action_mask"].astype(bool)
        actions = np.where(masks.any(axis=1), sample_legal(masks, rng), 0)  # 0: ignored
        _, rewards, terminated, _, info = envs.step(actions)
        wins += int((rewards[terminated] > 0).sum())
        losses += int((rewards[terminated] < 0).sum())
    seconds = time.perf_counter() - start
    print(f"{n} games at once, {steps} steps: {n * steps / seconds:,.0f} learner moves/s "
          f"against greedy (its moves included); random learner won {wins} of "
          f"{wins + losses} finished games")
    envs.close()


if __name__ == "__main__":
    main()
