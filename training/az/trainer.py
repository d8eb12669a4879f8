"""The search-guided training loop: self-play with the Gumbel search, then learning, repeated.

:func:`run_az` runs :class:`AZOptions`. Each iteration the worker plays
``games_per_iteration`` games with the current network (all ``parallel_games`` games in
flight searched together), the samples go to the replay buffer, and the learner takes
minibatch steps on the buffer. After each iteration the run folder gets, written
atomically:

    checkpoint.pt   the network, its optimiser, the replay buffer and the counters: what
                    ``resume`` continues from (the same results as a run never stopped)
    net.pt          the current network as a model file (play it: ``az:RUN/net.pt``)
    metrics.csv     one row per iteration: losses, speed, the tree / network time split

A checkpoint that is damaged or was written for other options is refused with a one-line
:class:`~patchwork_env.training.checkpoint.CheckpointError`.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numba
import numpy as np
import torch

from patchwork_env.agents.az_net import AZ_KINDS, AZNet, load_az_net, save_az_net
from patchwork_env.observation import layout
from patchwork_env.rules import get_rules
from patchwork_env.training.checkpoint import CheckpointError, load_checkpoint, save_checkpoint

from .buffer import ReplayBuffer
from .learner import Learner
from .selfplay import SearchSettings, SelfPlayWorker

CHECKPOINT = "checkpoint.pt"
NET_FILE = "net.pt"
METRICS = "metrics.csv"
KIND = "az"
RESUMABLE_CHANGES = ("iterations", "run_dir", "resume", "overwrite", "threads")
"""Options a resumed run may change; any other difference from the checkpoint is refused."""
METRIC_FIELDS = ("iteration", "games", "samples", "buffer", "learner_steps", "policy_loss",
                 "value_loss", "target_entropy", "selfplay_s", "learn_s", "positions_per_s",
                 "evaluations_per_s", "tree_fraction", "player0_wins", "mean_abs_score_diff")


class AZRunError(Exception):
    """A run folder or option that cannot be used as asked (the message is one line)."""


@dataclass
class AZOptions:
    """Everything a search-guided run depends on."""

    iterations: int = 10
    """Self-play + learning rounds to run (a resumed run continues up to this number)."""
    games_per_iteration: int = 256
    """Games of self-play per iteration."""
    parallel_games: int = 256
    """Games in flight at once: every network call evaluates one leaf of each."""
    simulations: int = 32
    """Simulations per move after the root's evaluation."""
    max_considered: int = 16
    """Root actions sampled by Gumbel-top-k for sequential halving."""
    top_k: int = 32
    """Legal actions kept (by prior) at inner nodes of the search."""
    gumbel_scale: float = 1.0
    """Scale of the root's Gumbel noise (0: no exploration)."""
    c_visit: float = 50.0
    """sigma(q) = (c_visit + max visits) * c_scale * q."""
    c_scale: float = 0.1
    """See c_visit."""
    score_weight: float = 0.0
    """Weight of the clipped score difference in a finished game's value (0: win/loss)."""
    score_scale: float = 20.0
    """Score difference that counts as a full win in the shaped value."""
    net: str = "mlp"
    """Network body: mlp or stencil."""
    hidden: int = 256
    """Width of the network's hidden layers."""
    layers: int = 2
    """Hidden layers of the mlp body."""
    init: str = ""
    """An az network file to start from (default: fresh weights from the seed)."""
    learning_rate: float = 1e-3
    """Adam's learning rate."""
    weight_decay: float = 1e-4
    """Decoupled weight decay."""
    value_weight: float = 1.0
    """Weight of the value's squared error in the loss."""
    batch_size: int = 256
    """Samples per learner step."""
    sample_reuse: float = 4.0
    """Learner steps per iteration: enough for each new sample to be drawn this many times
    on average."""
    buffer_size: int = 100_000
    """Samples the replay buffer keeps (the oldest are dropped)."""
    seed: int = 0
    """Seeds the network, the games, the search's noise and the minibatches."""
    threads: int = 0
    """CPU threads for torch and numba (0: leave their defaults)."""
    rules: str = "default"
    """Rule preset of the games."""
    run_dir: str = ""
    """Folder for the checkpoint, the network and the metrics (default: runs/az-seed<seed>)."""
    resume: bool = False
    """Continue the run in run_dir from its checkpoint."""
    overwrite: bool = False
    """Start afresh in a run_dir that holds another run."""

    def check(self) -> None:
        """:class:`AZRunError` naming the first option out of its range."""
        positive = ("iterations", "games_per_iteration", "parallel_games", "max_considered",
                    "top_k", "hidden", "layers", "batch_size", "buffer_size")
        for name in positive:
            if getattr(self, name) < 1:
                raise AZRunError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("simulations", "threads", "seed"):
            if getattr(self, name) < 0:
                raise AZRunError(f"{name} must not be negative, got {getattr(self, name)}")
        for name in ("learning_rate", "sample_reuse", "score_scale", "c_scale"):
            if not getattr(self, name) > 0:
                raise AZRunError(f"{name} must be positive, got {getattr(self, name)}")
        if not 0.0 <= self.score_weight <= 1.0:
            raise AZRunError(f"score_weight must lie in [0, 1], got {self.score_weight}")
        if self.net not in AZ_KINDS:
            raise AZRunError(f"net must be one of {', '.join(AZ_KINDS)}, got {self.net!r}")
        try:
            get_rules(self.rules)
        except (KeyError, ValueError) as e:
            raise AZRunError(f"rules: {e}") from None

    def search_settings(self) -> SearchSettings:
        """How self-play searches under these options."""
        # The search's settings are the options of the same names.
        return SearchSettings(**{f.name: getattr(self, f.name) for f in fields(SearchSettings)
                                 if hasattr(self, f.name)})

    def folder(self) -> Path:
        """The run folder."""
        return Path(self.run_dir or f"runs/az-seed{self.seed}")


def _fresh_net(opts: AZOptions) -> AZNet:
    if opts.init:
        return load_az_net(opts.init)
    torch.manual_seed(opts.seed)
    return AZNet(layout(get_rules(opts.rules)).size, kind=opts.net, hidden=opts.hidden,
                 layers=opts.layers)


def _check_resumable(saved: dict[str, Any], opts: AZOptions, path: Path) -> None:
    if saved.get("kind") != KIND:
        raise CheckpointError(f"{path} is not the checkpoint of a search-guided (az) run")
    given = dataclasses.asdict(opts)
    changed = sorted(k for k, v in saved["options"].items()
                     if k not in RESUMABLE_CHANGES and given.get(k) != v)
    if changed:
        raise CheckpointError(f"{path} was written with other options ({', '.join(changed)} "
                              "differ); resume with the run's own options")


class AZRun:
    """A run in memory: the worker, the learner, the buffer and the counters."""

    def __init__(self, opts: AZOptions) -> None:
        self.opts = opts
        self.dir = opts.folder()
        self.iteration = 0
        self.games = 0
        net = _fresh_net(opts)
        self.learner = Learner(net, opts.learning_rate, opts.weight_decay, opts.value_weight)
        self.worker = SelfPlayWorker(net.config(), opts.search_settings())
        self.buffer = ReplayBuffer(opts.buffer_size, opts.rules)

    # ----- checkpoints -----------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """Everything :meth:`restore` needs, as tensors and plain data."""
        return {"kind": KIND, "options": dataclasses.asdict(self.opts),
                "net_config": self.learner.net.config(), "learner": self.learner.state_dict(),
                "buffer": self.buffer.state_dict(),
                "counters": {"iteration": self.iteration, "games": self.games}}

    def restore(self, saved: dict[str, Any], path: Path) -> None:
        """Continue from a checkpoint read from ``path``."""
        _check_resumable(saved, self.opts, path)
        try:
            if saved["net_config"] != self.learner.net.config():
                raise ValueError("its network is not the one of these options")
            self.learner.load_state_dict(saved["learner"])
            self.buffer.load_state_dict(saved["buffer"])
            self.iteration = int(saved["counters"]["iteration"])
            self.games = int(saved["counters"]["games"])
        except (KeyError, TypeError, ValueError, RuntimeError) as e:
            raise CheckpointError(f"checkpoint {path} cannot be restored: "
                                  f"{str(e).splitlines()[0] if str(e) else type(e).__name__}"
                                  ) from None

    def save(self) -> None:
        """Write the checkpoint and the network file (each atomically)."""
        save_checkpoint(self.dir / CHECKPOINT, self.state())
        save_az_net(self.learner.net, self.dir / NET_FILE)

    # ----- one iteration -----------------------------------------------------------------
    def iterate(self) -> dict[str, Any]:
        """Self-play, then learning; the iteration's metrics row."""
        opts = self.opts
        batch = self.worker.generate(self.learner.net.state_dict(), opts.games_per_iteration,
                                     seed=opts.seed * 1_000_003 + self.iteration)
        self.buffer.add(batch)
        self.games += batch.games
        start = time.perf_counter()
        rng = np.random.default_rng([opts.seed, self.iteration, 1])
        steps = max(1, math.ceil(opts.sample_reuse * len(batch) / opts.batch_size))
        losses = [self.learner.step(self.buffer.sample(opts.batch_size, rng))
                  for _ in range(steps)]
        learn_s = time.perf_counter() - start
        self.iteration += 1
        st = batch.stats
        split = st["tree_seconds"] + st["network_seconds"]
        return {"iteration": self.iteration, "games": self.games, "samples": self.buffer.added,
                "buffer": len(self.buffer), "learner_steps": self.learner.steps,
                "policy_loss": float(np.mean([x["policy"] for x in losses])),
                "value_loss": float(np.mean([x["value"] for x in losses])),
                "target_entropy": float(np.mean([x["target_entropy"] for x in losses])),
                "selfplay_s": st["seconds"], "learn_s": learn_s,
                "positions_per_s": st["moves"] / st["seconds"],
                "evaluations_per_s": st["evaluations"] / max(st["network_seconds"], 1e-9),
                "tree_fraction": st["tree_seconds"] / split if split else 0.0,
                "player0_wins": st["player0_wins"],
                "mean_abs_score_diff": st["mean_abs_score_diff"]}


def _claim(opts: AZOptions) -> Path:
    folder = opts.folder()
    if opts.resume:
        if not (folder / CHECKPOINT).is_file():
            raise AZRunError(f"cannot resume: there is no {CHECKPOINT} in {folder}")
        return folder
    if (folder / CHECKPOINT).exists() and not opts.overwrite:
        raise AZRunError(f"{folder} holds another run: resume it, pass overwrite, or choose "
                         "another run_dir")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise AZRunError(f"cannot create the run folder {folder}: {e.strerror or e}") from None
    return folder


def _metrics(path: Path, keep_up_to: int | None) -> None:
    """Start ``metrics.csv``; a resumed run keeps the rows of the iterations it has."""
    rows = []
    if keep_up_to is not None and path.exists():
        with open(path, newline="") as f:
            rows = [r for r in csv.DictReader(f) if int(r["iteration"]) <= keep_up_to]
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, METRIC_FIELDS)
        writer.writeheader()
        writer.writerows(rows)


def run_az(opts: AZOptions, log: Any = print) -> dict[str, Any]:
    """Run (or, with ``resume``, continue) a search-guided training run up to
    ``opts.iterations``; returns its last metrics row (``{}`` if nothing was left to do).

    Raises :class:`AZRunError` for an option out of range or a folder that cannot be used,
    and
    :class:`~patchwork_env.training.checkpoint.CheckpointError` for a checkpoint that
    cannot be trusted; ``log`` (``print`` by default, ``None`` for silence) gets one line
    per iteration.
    """
    opts.check()
    if opts.threads:
        torch.set_num_threads(opts.threads)
        numba.set_num_threads(min(opts.threads, numba.config.NUMBA_NUM_THREADS))
    folder = _claim(opts)
    run = AZRun(opts)
    if opts.resume:
        run.restore(load_checkpoint(folder / CHECKPOINT), folder / CHECKPOINT)
    _metrics(folder / METRICS, run.iteration if opts.resume else None)
    row: dict[str, Any] = {}
    while run.iteration < opts.iterations:
        row = run.iterate()
        run.save()
        with open(folder / METRICS, "a", newline="") as f:
            csv.DictWriter(f, METRIC_FIELDS).writerow(
                {k: f"{v:.4f}" if isinstance(v, float) else v for k, v in row.items()})
        if log:
            log(f"iteration {row['iteration']}: {row['games']} games, "
                f"policy {row['policy_loss']:.3f}, value {row['value_loss']:.3f}, "
                f"{row['positions_per_s']:.0f} positions/s, tree {row['tree_fraction']:.0%}")
    return row
