"""Self-play training of a Patchwork agent: search-guided (the default) or MaskablePPO.

    python train.py                          # the default run (search-guided), runs/az-seed0
    python train.py --help                   # its flags
    python train.py --algo ppo               # MaskablePPO's default run, runs/ppo-seed0
    python train.py --algo ppo --help        # its flags

The search-guided trainer (``--algo az``, the default) lives in ``training/az``; its help
describes it. The rest of this page is about MaskablePPO.

    python train.py --algo ppo --total-steps 1000000    # a longer run
    python train.py --algo ppo --resume runs/ppo-seed0  # continue a stopped or killed run

A new run refuses a folder that holds another run unless --overwrite is given, and a
second program on a folder in use refuses at once; a resumed run refuses a --total-steps
it has already reached. Every file is written atomically (whole, or the earlier one kept);
a full disk ends the run with one line and exit status 1, and it continues from its last
checkpoint with --resume. A Ctrl-C ends it with one line and exit status 130, a
``SIGTERM`` (``kill PID``, a cluster's scheduler) the same way with 143; either keeps the
last checkpoint. When the reader of the output goes away (``train.py | head``) the program
ends quietly at its next print with exit status 141. (How long the default run takes:
docs/training.md.)

The learner plays a batch of games (``PatchworkVecEnv``: its seat drawn at random for each
game, the opponent's moves played inside the env) against opponents drawn from a pool:
frozen snapshots of itself, added every ``--snapshot-every`` updates, plus the ``random``
and ``greedy`` players (see ``training/ppo/pool.py``). Every ``--eval-every`` steps it plays
paired-seat matches against ``random`` and ``greedy`` (the code of ``evaluate.py``).

A run folder holds:

    checkpoint.pt     the model, its optimiser, the step counter and the pool (atomic)
    best.pt           the policy with the best of the run's evaluations so far (a policy
                      file: play it with ``evaluate.py ppo:runs/.../best.pt``)
    final.pt          the policy at the end of the run
    best.zip, final.zip  the same policies as ``MaskablePPO.load`` files
    metrics.csv       one row per evaluation: win rates with 95% intervals, speed, pool
    tb/               TensorBoard logs (losses, entropy, win rates)
    learning_curve.png  the win rates against ``random`` and ``greedy`` over the steps
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from patchwork_env import agents
from patchwork_env.agents.ppo.networks import NETS
from patchwork_env.evaluation.tournament import MAX_GAMES
from patchwork_env.files.stdout import ends_quietly_when_stdout_closes
from patchwork_env.files.termination import stops_on_sigterm_as_on_ctrl_c
from patchwork_env.training.cli import check_types, dataclass_parser, flag, given_fields
from patchwork_env.training.ppo.limits import check_memory
from patchwork_env.training.ppo.session import run_ppo


@dataclass
class Options:
    """Everything a run depends on; each field is a command-line flag (``--total-steps``)."""

    total_steps: int = 100_000
    """Learner moves to train for (all games together); PPO plays whole rollouts of
    --n-envs x --n-steps moves, so a run can end up to one rollout past it."""
    seed: int = 0
    """Seeds the network, the games, the opponent pool and the evaluations (0 to
    4294967295)."""
    run_dir: str = ""
    """Folder for checkpoints, logs and exported models (default: runs/ppo-seed<seed>). A
    folder that holds another run is refused unless --overwrite is given."""
    resume: str = ""
    """Continue the run saved in this folder; its options apply, except --total-steps,
    --threads, --device and the logging flags when given. Refused when the run has already
    reached --total-steps (pass a larger one to train on)."""
    overwrite: bool = False
    """Let a new run replace the run in --run-dir: its files are deleted when the new run's
    warm start is done."""
    threads: int = 2
    """CPU threads for the network (torch.set_num_threads)."""
    device: str = "auto"
    """Where the network learns and plays: auto (CUDA where this machine has it, else MPS,
    else the CPU), cpu, cuda, cuda:N or mps. A resumed run takes this flag's, not its
    checkpoint's (which holds CPU copies)."""
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
    """Policy network (see agents/ppo/networks.py): stencil (convolutions over the quilts,
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

    def __post_init__(self) -> None:
        self.validate()

    def folder(self) -> Path:
        """The run's folder: --resume's, else --run-dir (default runs/ppo-seed<seed>)."""
        return Path(self.resume or self.run_dir or f"runs/ppo-seed{self.seed}")

    def validate(self) -> None:
        """``ValueError`` naming the first option out of its range."""
        check_types(self)
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
        if not 0 <= self.seed < 2**32:
            raise ValueError(f"--seed must lie in 0..{2**32 - 1}, got {self.seed}")
        if self.imitation_positions < 0:
            raise ValueError("--imitation-positions must be 0 or more")
        if self.batch_size > self.n_envs * self.n_steps:
            raise ValueError(f"--batch-size {self.batch_size} is more than a rollout holds "
                             f"(--n-envs x --n-steps = {self.n_envs * self.n_steps})")
        for name in ("eval_games", "final_eval_games"):
            if getattr(self, name) > MAX_GAMES:
                raise ValueError(f"--{flag(name)} must be at most {MAX_GAMES:,}, "
                                 f"got {getattr(self, name)}")
        from patchwork_env.agents.device import resolve_device

        resolve_device(self.device)  # a DeviceError (a ValueError) for one this machine lacks
        if self.resume and self.overwrite:
            raise ValueError("--overwrite starts a new run and --resume continues one: "
                             "pass one of them")
        check_memory(self.n_envs, self.n_steps, self.imitation_positions)
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


# ---------------------------------------------------------------------------------------
# command line


ALGOS = ("az", "ppo")


def split_algo(argv: list[str]) -> tuple[str, list[str]]:
    """``(algo, the other arguments)`` from ``--algo NAME`` / ``--algo=NAME`` (``az`` when
    absent); exit 2 with one line for an unknown or missing name."""
    for i, arg in enumerate(argv):
        if arg == "--algo" or arg.startswith("--algo="):
            name = arg.partition("=")[2] if "=" in arg else (argv[i + 1] if i + 1 < len(argv)
                                                             else "")
            if name not in ALGOS:
                print(f"train.py: error: --algo must be one of {', '.join(ALGOS)}, got "
                      f"{name!r}", file=sys.stderr)
                raise SystemExit(2)
            rest = argv[:i] + argv[i + (1 if "=" in arg else 2):]
            return name, rest
    return "az", argv


def parse_options(argv: list[str] | None = None) -> tuple[Options, set[str]]:
    """The options from the command line, and the names of those given explicitly."""
    doc = "\n\n".join(["Self-play training of a Patchwork agent with MaskablePPO.",
                        *(__doc__ or "").split("\n\n")[3:6]])
    parser = dataclass_parser(Options, "train.py --algo ppo", doc)
    args = parser.parse_args(argv)
    given = given_fields(Options, args)
    try:
        opts = Options(**vars(args))
    except ValueError as e:
        parser.error(str(e))
    return opts, given


@ends_quietly_when_stdout_closes
@stops_on_sigterm_as_on_ctrl_c
def main(argv: list[str] | None = None) -> int:
    """Run ``train.py`` with the command line ``argv``; the exit status.

    ``--algo az`` (the default) runs the search-guided trainer (``training/az``), whose
    flags ``--help`` lists; ``--algo ppo`` trains MaskablePPO as described above.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    algo, argv = split_algo(argv)
    if algo == "az":
        from patchwork_env.training.az.cli import main as az_main

        return az_main(argv)
    return run_ppo(*parse_options(argv))


if __name__ == "__main__":
    sys.exit(main())
