"""Self-play training of a Patchwork agent with MaskablePPO.

    python train.py                          # the default run: ~10 minutes on 2 CPU cores
    python train.py --total-steps 1000000    # a longer run
    python train.py --resume runs/ppo-seed0  # continue a run that was stopped or killed

The learner plays a batch of games (``PatchworkVecEnv``: its seat drawn at random for each
game, the opponent's moves played inside the env) against opponents drawn from a pool:
frozen snapshots of itself, added every ``--snapshot-every`` updates, plus the ``random``
and ``greedy`` players (see ``training/pool.py``). Every ``--eval-every`` steps it plays
paired-seat matches against ``random`` and ``greedy`` (the code of ``evaluate.py``).

A run folder holds:

    checkpoint.pt     the model, its optimiser, the step counter and the pool (atomic)
    best.pt           the policy with the best evaluation so far (a policy file: play it
                      with ``evaluate.py ppo:runs/.../best.pt``)
    final.pt          the policy at the end of the run
    best.zip, final.zip  the same policies as ``MaskablePPO.load`` files
    metrics.csv       one row per evaluation: win rates with 95% intervals, speed, pool
    tb/               TensorBoard logs (losses, entropy, win rates)
    learning_curve.png  the win rates against ``random`` and ``greedy`` over the steps
"""

from __future__ import annotations

import dataclasses
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.logger import configure

from patchwork_env import agents
from patchwork_env.agents.model_file import load_policy, policy_config
from patchwork_env.agents.networks import NETS, FastMaskablePolicy, PatchworkPolicy
from patchwork_env.training.callback import Trainer
from patchwork_env.training.checkpoint import (
    CheckpointError,
    export_policy,
    load_checkpoint,
    save_checkpoint,
)
from patchwork_env.training.cli import dataclass_parser, flag, given_fields
from patchwork_env.training.evaluation import FINAL_EVAL_SEED, describe, evaluate
from patchwork_env.training.imitation import demonstrations, imitate
from patchwork_env.training.metrics import MetricsCsv, plot_learning_curve
from patchwork_env.training.pool import OpponentPool, SelfPlayVecEnv


@dataclass
class Options:
    """Everything a run depends on; each field is a command-line flag (``--total-steps``)."""

    total_steps: int = 100_000
    """Learner moves to train for (all games together)."""
    seed: int = 0
    """Seeds the network, the games, the opponent pool and the evaluations."""
    run_dir: str = ""
    """Folder for checkpoints, logs and exported models (default: runs/ppo-seed<seed>)."""
    resume: str = ""
    """Continue the run saved in this folder; its options apply, except --total-steps and
    the logging flags when given."""
    threads: int = 2
    """CPU threads for the network (torch.set_num_threads)."""
    n_envs: int = 64
    """Games played at once."""
    n_steps: int = 64
    """Learner moves per game between two updates (an update learns n_envs * n_steps)."""
    batch_size: int = 1024
    """Minibatch size of the PPO epochs."""
    n_epochs: int = 4
    """Passes over each rollout."""
    learning_rate: float = 1e-4
    """Adam's step size."""
    gamma: float = 1.0
    """Discount factor (the only reward comes at the end of a game)."""
    gae_lambda: float = 0.95
    """GAE's bias-variance trade-off."""
    clip_range: float = 0.2
    """PPO's clipping of the probability ratio."""
    ent_coef: float = 0.001
    """Weight of the entropy bonus."""
    vf_coef: float = 0.5
    """Weight of the value loss."""
    net: str = "stencil"
    """Policy network (see agents/networks.py): stencil (convolutions over the quilts,
    placements scored through each patch's shape), conv (placements as plain planes of
    logits) or mlp."""
    channels: int = 32
    """Width of the convolutions (stencil and conv nets)."""
    hidden: int = 256
    """Width of the hidden layers (the context MLP of the stencil and conv nets, or each
    MLP layer)."""
    init: str = ""
    """Start from the policy in this model file (e.g. models/ppo.pt, or a run's best.pt or
    best.zip) instead of imitating a teacher; its network must match --net, --channels and
    --hidden."""
    teacher: str = "greedy"
    """The agent the policy imitates before self-play (a registry spec, e.g. mcts:100)."""
    imitation_positions: int = 30_000
    """Positions of the teacher's play the policy imitates before self-play starts (0:
    start from a uniform policy); see training/imitation.py."""
    imitation_epochs: int = 4
    """Passes over those positions."""
    imitation_learning_rate: float = 1e-3
    """Adam's step size while imitating."""
    reward: str = "score"
    """score: score_scale times the final score difference; win: +1 / -1."""
    score_scale: float = 0.02
    """Reward per point of score difference with --reward score."""
    random_weight: float = 0.1
    """Share of the games played against the random player."""
    greedy_weight: float = 0.5
    """Share of the games played against the greedy player."""
    self_weight: float = 0.4
    """Share of the games played against snapshots of the learner (split equally)."""
    snapshot_every: int = 5
    """Updates between two snapshots of the learner added to the pool."""
    pool_size: int = 8
    """Most snapshots the pool holds (the oldest is dropped first)."""
    eval_every: int = 25_000
    """Steps between two evaluations against random and greedy."""
    eval_games: int = 100
    """Games per evaluation and opponent (half as many setups, each played with both
    seatings)."""
    final_eval_games: int = 400
    """Games per opponent of the evaluation at the end of the run."""
    checkpoint_every: int = 25_000
    """Steps between two checkpoints (there is always one at the end)."""
    progress: bool = True
    """Show a progress bar."""
    plot: bool = True
    """Draw learning_curve.png at the end."""

    def validate(self) -> None:
        """``ValueError`` naming the first option out of its range."""
        positive = ("total_steps", "threads", "n_envs", "n_steps", "batch_size", "n_epochs",
                    "learning_rate", "channels", "hidden", "score_scale", "snapshot_every",
                    "pool_size", "eval_every", "eval_games", "final_eval_games", "imitation_epochs",
                    "imitation_learning_rate",
                    "checkpoint_every", "clip_range")
        for name in positive:
            if not getattr(self, name) > 0:
                raise ValueError(f"--{flag(name)} must be positive, got {getattr(self, name)}")
        choices = {"net": (*NETS, "mlp"), "reward": ("win", "score")}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"--{flag(name)} must be one of {', '.join(allowed)}, "
                                 f"got {getattr(self, name)!r}")
        if not 0 <= self.gamma <= 1 or not 0 <= self.gae_lambda <= 1:
            raise ValueError("--gamma and --gae-lambda must lie in 0..1")
        if self.imitation_positions < 0:
            raise ValueError("--imitation-positions must be 0 or more")
        if self.teacher.split(":")[0] == "human":
            raise ValueError("--teacher must be an agent that plays by itself, not human")
        try:
            agents.make(self.teacher)
        except ValueError as e:
            raise ValueError(f"--teacher: {e}") from None
        if self.eval_games % 2 or self.final_eval_games % 2:
            raise ValueError("--eval-games and --final-eval-games must be even")
        weights = (self.random_weight, self.greedy_weight, self.self_weight)
        if min(weights) < 0 or not sum(weights) > 0:
            raise ValueError("the pool weights must be non-negative and not all zero")


RESUMABLE = ("total_steps", "resume", "run_dir", "threads", "progress", "plot")
"""Options a resumed run may change; the others must match the checkpoint's."""


# ---------------------------------------------------------------------------------------
# command line


def parse_options(argv: list[str] | None = None) -> tuple[Options, set[str]]:
    """The options from the command line, and the names of those given explicitly."""
    doc = "\n\n".join((__doc__ or "").split("\n\n")[:2])
    parser = dataclass_parser(Options, "train.py", doc)
    args = parser.parse_args(argv)
    given = given_fields(Options, args)
    opts = Options(**vars(args))
    try:
        opts.validate()
    except ValueError as e:
        parser.error(str(e))
    return opts, given


# ---------------------------------------------------------------------------------------
# building a run


def build_model(opts: Options, env: SelfPlayVecEnv) -> MaskablePPO:
    """A fresh MaskablePPO learner for ``opts`` (seeded)."""
    if opts.net in NETS:
        policy: Any = PatchworkPolicy
        policy_kwargs: dict[str, Any] = {"net_kwargs": {"kind": opts.net,
                                                        "channels": opts.channels,
                                                        "hidden": opts.hidden}}
    else:
        policy = FastMaskablePolicy
        policy_kwargs = {"net_arch": [opts.hidden, opts.hidden]}
    return MaskablePPO(policy, env, learning_rate=opts.learning_rate, n_steps=opts.n_steps,
                       batch_size=opts.batch_size, n_epochs=opts.n_epochs, gamma=opts.gamma,
                       gae_lambda=opts.gae_lambda, clip_range=opts.clip_range,
                       ent_coef=opts.ent_coef, vf_coef=opts.vf_coef,
                       policy_kwargs=policy_kwargs, seed=opts.seed, device="cpu", verbose=0)


def make_pool(opts: Options) -> OpponentPool:
    weights = {"random": opts.random_weight, "greedy": opts.greedy_weight,
               "self": opts.self_weight}
    return OpponentPool(weights, opts.pool_size, seed=opts.seed + 1)


def resumed_options(opts: Options, given: set[str], saved: dict[str, Any]) -> Options:
    """The checkpoint's options with the resumable ones given on the command line."""
    known = {f.name for f in dataclasses.fields(Options)}
    if set(saved) != known:
        raise CheckpointError("the checkpoint was written by another version of train.py "
                              f"(options differ: {sorted(set(saved) ^ known)})")
    clashes = [f"--{flag(n)} {getattr(opts, n)} (checkpoint: {saved[n]})"
               for n in sorted(given - set(RESUMABLE)) if getattr(opts, n) != saved[n]]
    if clashes:
        raise CheckpointError("the run was trained with other options: "
                              + ", ".join(clashes))
    return dataclasses.replace(Options(**saved), **{n: getattr(opts, n) for n in given
                                                    if n in RESUMABLE})


class Run:
    """The learner, its environment and pool, and the run folder they are saved in."""

    def __init__(self, opts: Options, state: dict[str, Any] | None = None) -> None:
        self.opts = opts
        self.dir = Path(opts.run_dir)
        steps = int(state["steps"]) if state else 0
        self.pool = make_pool(opts)
        # The env's games are seeded from the steps done, so a resumed run plays new games.
        self.env = SelfPlayVecEnv(opts.n_envs, self.pool, seed=opts.seed * 1_000_003 + steps,
                                  reward=opts.reward, score_scale=opts.score_scale)
        self.model = build_model(opts, self.env)
        self.updates = 0
        self.best = -1.0
        if state is None:
            if opts.init:
                self._load_policy(Path(opts.init))
            elif opts.imitation_positions:
                self._imitate_teacher()
            self.pool.add_snapshot(self.model.policy, "self-0")
        else:
            self._restore(state)

    def _load_policy(self, path: Path) -> None:
        try:
            saved = load_policy(path)
        except (FileNotFoundError, ValueError) as e:
            raise CheckpointError(f"--init: {e}") from None
        found, wanted = policy_config(saved), policy_config(self.model.policy)
        if found != wanted:
            raise CheckpointError(f"--init: {path} holds another network than --net "
                                  f"{self.opts.net} --channels {self.opts.channels} "
                                  f"--hidden {self.opts.hidden} (it holds a {found['net']} "
                                  f"network {found['net_kwargs']})")
        self.model.policy.load_state_dict(saved.state_dict())
        print(f"starting from the policy in {path}", file=sys.stderr)

    def _imitate_teacher(self) -> None:
        opts = self.opts
        print(f"imitating {opts.teacher} on {opts.imitation_positions:,} positions",
              file=sys.stderr)
        demos = demonstrations(opts.teacher, opts.imitation_positions, opts.seed, opts.reward,
                               opts.score_scale, progress=opts.progress)
        stats = imitate(self.model.policy, demos, opts.imitation_epochs, opts.batch_size,
                        opts.seed, opts.imitation_learning_rate, opts.vf_coef,
                        progress=opts.progress)
        print(f"  {opts.teacher}'s move is the policy's first choice in "
              f"{stats['agreement']:.0%} of the positions", file=sys.stderr)

    def _restore(self, state: dict[str, Any]) -> None:
        policy = self.model.policy
        try:
            policy.load_state_dict(state["policy"])
            policy.optimizer.load_state_dict(state["optimizer"])
            self.pool.load_state_dict(state["pool"], policy)
            torch.set_rng_state(state["torch_rng"])
            self.model.num_timesteps = int(state["steps"])
            self.updates = int(state["updates"])
            self.best = float(state["best"])
        except (KeyError, RuntimeError, TypeError, ValueError) as e:
            message = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise CheckpointError(f"the checkpoint does not fit this network: {message}"
                                  ) from None

    def save(self) -> None:
        """Write the checkpoint (atomically)."""
        save_checkpoint(self.dir / "checkpoint.pt", {
            "options": dataclasses.asdict(self.opts),
            "steps": self.model.num_timesteps,
            "updates": self.updates,
            "best": self.best,
            "policy": self.model.policy.state_dict(),
            "optimizer": self.model.policy.optimizer.state_dict(),
            "pool": self.pool.state_dict(),
            "torch_rng": torch.get_rng_state(),
        })

    def export(self, name: str) -> Path:
        """Save the policy as ``name.pt`` (a policy file) and ``name.zip``; the ``.pt``."""
        return export_policy(self.model, self.dir, name)[0]


# ---------------------------------------------------------------------------------------
# main


def seed_everything(seed: int, threads: int) -> None:
    torch.set_num_threads(threads)
    # Argument checks of torch's distributions cost ~5% of a step over 2026 actions.
    torch.distributions.Distribution.set_default_validate_args(False)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def start(opts: Options, given: set[str]) -> tuple[Run, int | None]:
    """A new run, or the one saved in ``--resume``; also the step it resumes from."""
    if not opts.resume:
        opts.run_dir = opts.run_dir or f"runs/ppo-seed{opts.seed}"
        seed_everything(opts.seed, opts.threads)
        Path(opts.run_dir).mkdir(parents=True, exist_ok=True)
        run = Run(opts)
        run.save()  # the warm start is not lost if the run is killed early
        return run, None
    path = Path(opts.resume) / "checkpoint.pt"
    if not path.exists():
        raise CheckpointError(f"no checkpoint to resume: {path} does not exist")
    state = load_checkpoint(path)
    if not isinstance(state.get("options"), dict) or "steps" not in state:
        raise CheckpointError(f"{path} holds no training state")
    opts = resumed_options(opts, given, state["options"])
    opts.run_dir = opts.resume
    seed_everything(opts.seed + int(state["steps"]), opts.threads)
    return Run(opts, state), int(state["steps"])


def main(argv: list[str] | None = None) -> int:
    opts, given = parse_options(argv)
    try:
        run, resumed_at = start(opts, given)
    except CheckpointError as e:
        print(f"train.py: error: {e}", file=sys.stderr)
        return 2
    opts = run.opts
    model = run.model
    model.set_logger(configure(str(run.dir / "tb"), ["tensorboard"]))
    csv_log = MetricsCsv(run.dir / "metrics.csv", resumed_at)
    remaining = opts.total_steps - model.num_timesteps
    if remaining > 0:
        where = f"resuming at step {resumed_at:,}" if resumed_at is not None else "new run"
        print(f"{where}: training to {opts.total_steps:,} steps in {run.dir}", file=sys.stderr)
        model.learn(remaining, callback=Trainer(run, csv_log), reset_num_timesteps=False)
    final = run.export("final")
    if opts.plot and csv_log.path.exists() and MetricsCsv.read(csv_log.path):
        plot_learning_curve(csv_log.path, run.dir / "learning_curve.png")
    model.policy.set_training_mode(False)
    print(f"final evaluation of {final} ({opts.final_eval_games} paired games per opponent):")
    for name in ("random", "greedy"):
        print(" ", describe(evaluate(model.policy, name, opts.final_eval_games,
                                     seed=FINAL_EVAL_SEED)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
