"""Train sb3-contrib's MaskablePPO on the batched SB3 env, then play a frozen copy of it.

A demonstration of the interface, not a recipe for a strong agent (``train.py`` is that):
MaskablePPO learns on ``PatchworkVecEnv`` (64 games in one compiled batch) against the
random player, then against a frozen copy of itself, and is evaluated against ``random``
with the project's tournament code. ``--smoke`` runs a few hundred steps.

    python examples/sb3_maskable_ppo.py [--steps 16384] [--seed 0] [--smoke]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from sb3_contrib import MaskablePPO

from patchwork_env.agents import PolicyAgent, make
from patchwork_env.evaluation.arena import play_match
from patchwork_env.evaluation.tournament import setup_seeds, summarise
from patchwork_env.integrations.sb3 import PatchworkVecEnv


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=16_384, help="learner moves per phase")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="a tiny run, for CI")
    args = parser.parse_args()
    steps, games, n_envs = (256, 4, 8) if args.smoke else (args.steps, 100, 64)

    start = time.perf_counter()
    venv = PatchworkVecEnv(n_envs, opponent="random", seed=args.seed)
    model = MaskablePPO("MlpPolicy", venv, n_steps=32 if args.smoke else 64,
                        batch_size=64, seed=args.seed, device="cpu")
    model.learn(steps)
    print(f"phase 1 (against random): {steps:,} moves in {time.perf_counter() - start:.0f} s")

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "gen1.zip"
        model.save(path)
        venv.set_opponent(PolicyAgent.from_model(path, seed=args.seed))  # a frozen copy
        model.learn(steps // 4)
    print(f"phase 2 (against its frozen copy): {steps // 4:,} moves, "
          f"{time.perf_counter() - start:.0f} s in all")

    learner = PolicyAgent.from_model(model, deterministic=True, seed=args.seed)
    records = play_match(learner, make("random", seed=args.seed), setup_seeds(args.seed, games))
    result = summarise("learner", "random", records)
    lo, hi = result.ci_a
    print(f"against random: {result.win_rate_a:.1%} of {result.games} games "
          f"(95% CI {lo:.1%}..{hi:.1%})")


if __name__ == "__main__":
    main()
