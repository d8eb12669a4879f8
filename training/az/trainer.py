"""The search-guided training loop: self-play with the Gumbel search, then learning, repeated.

:func:`run_az` runs :class:`AZOptions`. Each iteration the worker plays
``games_per_iteration`` games with the current network (all ``parallel_games`` games in
flight searched together), the samples go to the replay buffer, and the learner takes
minibatch steps on the buffer. After each iteration the run folder gets, written
atomically (``metrics.csv`` first, then the other two together, so that a run stopped at
any moment resumes with records that agree with its checkpoint):

    checkpoint.pt   the network, its average, its optimiser, the replay buffer and the
                    counters: what ``resume`` continues from (the same results as a run
                    never stopped)
    net.pt          the network the run publishes, as a model file (play it:
                    ``az:RUN/net.pt``): the moving average of the learner's weights
                    (:mod:`.averaging`; with ``average_decay`` 0, the learner's own)
    metrics.csv     one row per iteration: losses, speed, the tree / network time split
                    and, every ``eval_every`` iterations, the win rates of the network with
                    and without search against the evaluation opponents (see
                    :mod:`.monitor`, which also writes TensorBoard logs and the curve)

A new run saves once before its first iteration (after the teacher's warm start); with
``overwrite`` the previous run's files (:func:`~patchwork_env.training.run_folder.run_files`,
of either trainer) are deleted right before that. A checkpoint that is damaged, was written
for other options or holds anything a run cannot learn from is refused with a one-line
:class:`~patchwork_env.training.checkpoint.CheckpointError` (:mod:`.restore_checks`); an
iteration whose losses or weights are no longer finite is neither saved nor recorded.
TensorBoard's logs are appended to as TensorBoard does (a resumed run purges the steps
after its checkpoint).

The learner and this process's self-play network run on ``device`` in ``precision``; the
checkpoint and ``net.pt`` hold CPU copies, so a network trained on a GPU plays on a machine
without one, and a run resumes on another device or in another precision.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from patchwork_env.agents.az.net import (
    AZNet,
    check_weights,
    save_az_net,
)
from patchwork_env.agents.device import resolve_device, use_threads
from patchwork_env.files.atomic import together
from patchwork_env.files.claim import Claim, claim
from patchwork_env.files.folders import FolderError
from patchwork_env.training.az.averaging import average_of
from patchwork_env.training.az.buffer import ReplayBuffer
from patchwork_env.training.az.learner import Learner
from patchwork_env.training.az.monitor import Monitor, evaluate_net
from patchwork_env.training.az.options import (
    AUTO_WORKERS,
    DEFAULT_WORKERS,
    AZOptions,
    AZRunError,
)
from patchwork_env.training.az.restore_checks import (
    KIND,
    check_average_state,
    check_buffer_state,
    check_counters,
    check_learner_state,
    check_resumable,
    checkpoint_net,
    saved_options,
)
from patchwork_env.training.az.selfplay.pools import close, make_self_play
from patchwork_env.training.az.value_targets import bootstrapped_targets, mixed_targets
from patchwork_env.training.az.warm_start import imitate, start_net, teacher_samples
from patchwork_env.training.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from patchwork_env.training.checks import machine_cpus
from patchwork_env.training.run_folder import CHECKPOINT, clear, run_files

NET_FILE = "net.pt"


class AZRun:
    """A run in memory: the worker, the learner, the buffer and the counters."""

    def __init__(self, opts: AZOptions, net: AZNet | None = None) -> None:
        """A run of ``opts`` training ``net`` (by default the network ``opts`` start from),
        moved to ``opts.device``."""
        self.opts = opts
        self.dir = opts.folder()
        self.iteration = 0
        self.games = 0
        self.train_s = 0.0
        """Seconds of self-play and learning so far (evaluations excluded), over resumes."""
        self.wall_s = 0.0
        """Wall-clock seconds of the run so far, evaluations included, over resumes."""
        self.warm_started = False
        net = net if net is not None else start_net(opts)
        net.to(resolve_device(opts.device))
        self.learner = Learner(net, opts.learning_rate, opts.weight_decay, opts.value_weight,
                               precision=opts.precision,
                               score_head_weight=opts.score_head_weight,
                               ownership_weight=opts.ownership_weight)
        self.worker = make_self_play(net, opts)
        self.buffer = ReplayBuffer(opts.buffer_size, opts.rules, opts.game)
        self.average = average_of(self.learner.net, opts.average_decay)

    @property
    def published(self) -> AZNet:
        """The network the run publishes (``net.pt``) and evaluates: the average of the
        learner's weights (:mod:`.averaging`), or the learner's own."""
        return self.average.net if self.average is not None else self.learner.net

    def close(self) -> None:
        """Stop the self-play processes, if any."""
        close(self.worker)

    # ----- checkpoints -----------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """Everything :meth:`restore` needs, as tensors and plain data."""
        average = {} if self.average is None else {"average": self.average.state_dict()}
        return {"kind": KIND, "options": dataclasses.asdict(self.opts),
                "net_config": self.learner.net.config(), "learner": self.learner.state_dict(),
                **average, "buffer": self.buffer.state_dict(),
                "counters": {"iteration": self.iteration, "games": self.games,
                             "train_s": self.train_s, "wall_s": self.wall_s,
                             "warm_started": self.warm_started}}

    def restore(self, saved: dict[str, Any], path: Path) -> None:
        """Continue from a checkpoint read from ``path``, whose options :func:`_open_run`
        has checked and whose network this run was built with; :class:`CheckpointError`
        naming it and what is wrong if anything in it cannot be trusted
        (:mod:`.restore_checks`)."""
        try:
            check_counters(saved.get("counters"))
            check_learner_state(saved.get("learner"), self.learner.net)
            check_weights(self.learner.net, saved["learner"]["net"])
            check_buffer_state(saved.get("buffer"), self.buffer.rules, self.opts.buffer_size,
                               self.buffer.game)
            self.learner.load_state_dict(saved["learner"])
            # a run that did not average starts its average from its learner now
            self.average = average_of(self.learner.net, self.opts.average_decay)
            if self.average is not None and "average" in saved:
                check_average_state(saved["average"], self.learner.net)
                self.average.load_state_dict(saved["average"])
            self.buffer.load_state_dict(saved["buffer"])
            self.iteration = int(saved["counters"]["iteration"])
            self.games = int(saved["counters"]["games"])
            self.train_s = float(saved["counters"].get("train_s", 0.0))
            self.warm_started = bool(saved["counters"].get("warm_started", False))
            self.wall_s = float(saved["counters"].get("wall_s", self.train_s))
        except (KeyError, TypeError, ValueError, RuntimeError) as e:
            raise CheckpointError(f"checkpoint {path} cannot be restored: "
                                  f"{str(e).splitlines()[0] if str(e) else type(e).__name__}"
                                  ) from None

    def save(self) -> None:
        """Write the checkpoint and the network file, atomically and together (a run
        stopped meanwhile keeps the previous pair)."""
        with together():
            save_checkpoint(self.dir / CHECKPOINT, self.state())
            save_az_net(self.published, self.dir / NET_FILE)

    def warm_start(self, progress: bool) -> dict[str, Any]:
        """Imitate the teacher (once per run); the losses at the end."""
        opts = self.opts
        start = time.perf_counter()
        samples = teacher_samples(opts.teacher, opts.teacher_positions, opts.seed,
                                  self.buffer.rules, opts.score_weight, opts.score_scale,
                                  opts.playout_weight_at(0), opts.playouts, progress,
                                  self.buffer.game)
        result = imitate(self.learner, samples, self.buffer.rules, opts.teacher_epochs,
                         opts.batch_size, opts.seed, opts.augment, progress, self.buffer.game)
        self.train_s += time.perf_counter() - start
        self.wall_s += time.perf_counter() - start
        self.warm_started = True
        self.average = average_of(self.learner.net, opts.average_decay)  # from the imitator
        return result

    # ----- one iteration -----------------------------------------------------------------
    def iterate(self) -> dict[str, Any]:
        """One iteration, top to bottom: self-play, value targets, learning, the published
        network; its metrics row."""
        opts, iteration = self.opts, self.iteration
        seed = opts.seed * 1_000_003 + iteration

        # 1. Self-play: games_per_iteration games with the current network, every move of
        #    all games in flight searched together; each position searched is a sample.
        batch = self.worker.generate(self.learner.net.state_dict(), opts.games_per_iteration,
                                     seed=seed)

        # 2. Value targets: each game's outcome for the player to move, mixed early on with
        #    random-playout estimates and, if asked, with the search's value of the position;
        #    then the samples join the replay buffer.
        start = time.perf_counter()
        playout_weight = opts.playout_weight_at(iteration)
        if playout_weight > 0:
            estimates = self.buffer.game.playout_values(
                batch.states, self.buffer.rules, opts.playouts, seed,
                score_weight=opts.score_weight, score_scale=opts.score_scale)
            batch.values = mixed_targets(batch.values, estimates, playout_weight)
        if opts.root_value_weight > 0:
            batch.values = bootstrapped_targets(batch.values, batch.root_values,
                                                opts.root_value_weight)
        targets_s = time.perf_counter() - start
        self.buffer.add(batch)
        self.games += batch.games

        # 3. Learning: minibatch steps on the replay buffer, enough for each new policy
        #    target to be drawn sample_reuse times on average. Under playout cap
        #    randomization the cheaply searched moves add value samples but no steps, so
        #    cheaper games buy more games per hour rather than more learning per game.
        start = time.perf_counter()
        learning_rate = opts.learning_rate_at(iteration)
        self.learner.set_learning_rate(learning_rate)
        rng = np.random.default_rng([opts.seed, iteration, 1])
        policy_samples = (len(batch) if batch.policy_targets is None
                          else int(np.count_nonzero(batch.policy_targets)))
        steps = max(1, math.ceil(opts.sample_reuse * policy_samples / opts.batch_size))
        losses = [self.learner.step(self.buffer.sample(opts.batch_size, rng, opts.augment))
                  for _ in range(steps)]
        self.iteration += 1

        # 4. The published network: the moving average of the learner's weights.
        if self.average is not None:
            self.average.update(self.learner.net, self.iteration)
        learn_s = time.perf_counter() - start
        self.train_s += batch.stats["seconds"] + targets_s + learn_s
        return self._metrics(batch.stats, losses, learning_rate, targets_s, learn_s)

    def _metrics(self, st: dict[str, float], losses: list[dict[str, float]],
                 learning_rate: float, targets_s: float, learn_s: float) -> dict[str, Any]:
        """The metrics row of the iteration just done."""
        split = st["tree_seconds"] + st["network_seconds"]
        aux = {f"{k}_loss": float(np.mean([x[k] for x in losses]))
               for k in ("score", "ownership") if k in losses[0]}
        return {"iteration": self.iteration, "games": self.games, "samples": self.buffer.added,
                "buffer": len(self.buffer), "learner_steps": self.learner.steps,
                "train_s": self.train_s, "learning_rate": learning_rate,
                "policy_loss": float(np.mean([x["policy"] for x in losses])),
                "value_loss": float(np.mean([x["value"] for x in losses])),
                "target_entropy": float(np.mean([x["target_entropy"] for x in losses])),
                "selfplay_s": st["seconds"], "playout_s": targets_s, "learn_s": learn_s,
                "positions_per_s": st["moves"] / st["seconds"],
                "evaluations_per_s": st["evaluations"] / max(st["network_seconds"], 1e-9),
                "tree_fraction": st["tree_seconds"] / split if split else 0.0,
                "player0_wins": st["player0_wins"],
                "mean_abs_score_diff": st["mean_abs_score_diff"]} | aux


def _claim(opts: AZOptions) -> Claim:
    """The claim on the run folder, locked for the life of the run: :class:`AZRunError` for
    a ``resume`` without a checkpoint, a folder that holds another run of either trainer
    (unless ``overwrite``: its files are deleted by :func:`_first_checkpoint`), or one that
    cannot be created or written or is in use."""
    folder = opts.folder()
    if opts.resume and not (folder / CHECKPOINT).is_file():
        raise AZRunError(f"cannot resume: there is no {CHECKPOINT} in {folder}")
    try:
        if opts.resume:
            return claim(folder)
        return claim(folder, overwrite=opts.overwrite, contents=run_files, what="another run",
                     advice="resume it, pass overwrite, or choose another run_dir")
    except FolderError as e:
        raise AZRunError(str(e)) from None


def _open_run(opts: AZOptions, folder: Path, net: AZNet | None) -> AZRun:
    """The run to go on with: a fresh one training ``net``, or with ``resume`` the one in
    its checkpoint."""
    if not opts.resume:
        return AZRun(opts, net)
    path = folder / CHECKPOINT
    saved = load_checkpoint(path)
    check_resumable(saved, opts, path)
    # The run goes on recording the network it started from, whatever init says now.
    opts = dataclasses.replace(opts, init=saved["options"].get("init", ""))
    run = AZRun(opts, checkpoint_net(saved, path))
    try:
        run.restore(saved, path)
    except BaseException:
        run.close()
        raise
    return run


def run_az(opts: AZOptions, log: Any = print) -> dict[str, Any]:
    """Run (or, with ``resume``, continue) a search-guided training run up to
    ``opts.iterations``; returns its last metrics row (``{}`` if nothing was left to do).

    Everything that can be checked (the options, ``init``'s network) is checked before the
    run folder is claimed. Raises :class:`AZRunError` for an option out of range, a folder
    that cannot be used or a network that diverged,
    :class:`~patchwork_env.training.checkpoint.CheckpointError` for a checkpoint that
    cannot be trusted, :class:`~patchwork_env.training.metrics.MetricsError` for a damaged
    ``metrics.csv``, :class:`~patchwork_env.files.atomic.WriteError` for a file that cannot
    be written and :class:`~.selfplay.processes.WorkerError` for a self-play process that died; each
    leaves the last checkpoint to resume from. ``log`` (``print`` by default, ``None`` for
    silence) gets one line per iteration.
    """
    opts.check()
    if opts.workers == AUTO_WORKERS:
        opts = opts.with_workers()
        opts.check()  # the memory the processes' searches take
        if opts.workers < DEFAULT_WORKERS and log:
            log(f"this machine has {machine_cpus()} CPU: self-play runs in the learner's "
                f"process (--workers 1), not in {DEFAULT_WORKERS} processes")
    net = None if opts.resume else start_net(opts)
    if opts.threads:
        use_threads(opts.threads)
    with _claim(opts) as folder:
        run = _open_run(opts, folder, net)
        try:
            warm = bool(run.opts.teacher and not run.warm_started)
            if warm:
                result = run.warm_start(progress=log is not None)
                if log:
                    log(f"imitated {run.opts.teacher} on {run.opts.teacher_positions} "
                        f"positions ({result['steps']} steps): policy {result['policy']:.3f}, "
                        f"value {result['value']:.3f}")
            if not opts.resume:
                _first_checkpoint(run, log)
            elif warm:
                run.save()
            return _iterate(run, log)
        finally:
            run.close()


def _first_checkpoint(run: AZRun, log: Any) -> None:
    """Save a new run before its first iteration, once any warm start is done; with
    ``overwrite``, the previous run's files are deleted right before (a run stopped
    earlier leaves them as they were)."""
    if run.opts.overwrite and (removed := clear(run.dir)) and log:
        print(f"overwrite: deleted the previous run's {', '.join(removed)} in {run.dir}",
              file=sys.stderr)
    run.save()


def _iterate(run: AZRun, log: Any) -> dict[str, Any]:
    """The iterations left, each recorded, saved and (when due) evaluated. The row goes to
    ``metrics.csv`` before the checkpoint: a run stopped between the two plays the
    iteration again on resuming, and its row is replaced."""
    opts = run.opts
    monitor = Monitor(run.dir, opts.opponents(), opts.iterations, run.iteration, opts.resume,
                      show_bar=log is not None)
    row: dict[str, Any] = {}
    try:
        while run.iteration < opts.iterations:
            start = time.perf_counter()
            row = run.iterate()
            _check_finite(run, row)
            last = run.iteration == opts.iterations
            if opts.eval_every and (run.iteration % opts.eval_every == 0 or last):
                row.update(evaluate_net(run.published, opts.eval_evaluations,
                                        opts.opponents(), opts.eval_games, rules=opts.rules))
            run.wall_s += time.perf_counter() - start
            row["wall_s"] = run.wall_s
            monitor.record(row)
            run.save()
            if log:
                tqdm.write(describe(row, opts.opponents()), file=sys.stderr)
    finally:
        monitor.close()
    return row


def _check_finite(run: AZRun, row: dict[str, Any]) -> None:
    """:class:`AZRunError` when the iteration just learnt turned the losses or the weights
    into NaN or infinities: such a network is neither saved nor recorded."""
    losses = (row["policy_loss"], row["value_loss"])
    if all(math.isfinite(x) for x in losses) and all(
            bool(torch.isfinite(p).all()) for p in run.learner.net.parameters()):
        return
    raise AZRunError(f"iteration {row['iteration']} diverged (policy loss {losses[0]:.6g}, "
                     f"value loss {losses[1]:.6g}, or weights that are not finite): it was "
                     f"not saved; the checkpoint of iteration {row['iteration'] - 1} in "
                     f"{run.dir} is kept (try a lower --learning-rate)")


def describe(row: dict[str, Any], opponents: list[str]) -> str:
    """One line about an iteration."""
    text = (f"iteration {row['iteration']}: {row['games']} games, "
            f"policy {row['policy_loss']:.3f}, value {row['value_loss']:.3f}, "
            f"{row['positions_per_s']:.0f} positions/s, tree {row['tree_fraction']:.0%}")
    for o in opponents:
        if f"az_vs_{o}" in row:
            text += (f"; vs {o}: search {row[f'az_vs_{o}']:.0%}, "
                     f"raw policy {row[f'policy_vs_{o}']:.0%}")
    return text


__all__ = ["CHECKPOINT", "NET_FILE", "AZRun", "checkpoint_net", "describe", "run_az",
           "saved_options", "start_net"]
