"""A MaskablePPO run of ``train.py --algo ppo`` from its start to its report.

:func:`run_ppo` claims the run folder (:func:`~patchwork_env.training.run_folder.claim_run`:
checked and locked before any work), starts the run (:func:`start`: a new one, or the one
saved in ``--resume``), trains it to ``--total-steps`` (:func:`train`) and prints what it
measured. ``opts`` is ``train.Options``: the run reads its fields by name.
"""

from __future__ import annotations

import dataclasses
import random
import sys
import time
from typing import Any

import numpy as np
import torch
from stable_baselines3.common.logger import configure

from patchwork_env.files.atomic import WriteError
from patchwork_env.files.folders import FolderError
from patchwork_env.files.termination import INTERRUPTED_STATUS
from patchwork_env.training.checkpoint import CheckpointError, load_checkpoint
from patchwork_env.training.cli import flag
from patchwork_env.training.evaluation import (
    EVAL_SEED,
    FINAL_EVAL_SEED,
    describe,
    evaluate_with_bar,
)
from patchwork_env.training.metrics import MetricsCsv, MetricsError, plot_learning_curve
from patchwork_env.training.ppo.callback import Trainer, end_step
from patchwork_env.training.ppo.run import Run
from patchwork_env.training.run_folder import CHECKPOINT, claim_run, clear

RESUMABLE = ("total_steps", "resume", "run_dir", "threads", "device", "progress", "plot")
"""Options a resumed run may change; the others must match the checkpoint's."""
COMMAND_ONLY = {"overwrite": False, "device": "auto"}
"""Options that say how a run starts or where it computes, not what it learns: a resumed
run takes them from its command line (their defaults where not given), and a checkpoint
written before they existed may lack them."""


def resumed_options(opts: Any, given: set[str], saved: dict[str, Any]) -> Any:
    """The checkpoint's options with the resumable ones given on the command line."""
    options = type(opts)
    known = {f.name for f in dataclasses.fields(options)}
    saved = {**COMMAND_ONLY, **saved}
    if set(saved) != known:
        raise CheckpointError("the checkpoint was written by another version of train.py "
                              f"(options differ: {sorted(set(saved) ^ known)})")
    clashes = [f"--{flag(n)} {getattr(opts, n)} (checkpoint: {saved[n]})"
               for n in sorted(given - set(RESUMABLE)) if getattr(opts, n) != saved[n]]
    if clashes:
        raise CheckpointError("the run was trained with other options: "
                              + ", ".join(clashes))
    try:  # checked with the command line's resumable options (a --threads for this machine)
        return options(**{**saved, **COMMAND_ONLY,
                          **{n: getattr(opts, n) for n in given if n in RESUMABLE}})
    except ValueError as e:
        raise CheckpointError(f"the checkpoint's options are not valid: {e}") from None


def seed_everything(seed: int, threads: int) -> None:
    """Seed every generator a run draws from (``seed`` may exceed numpy's 32 bits: a resumed
    run adds its steps) and set torch's threads."""
    torch.set_num_threads(threads)
    # Argument checks of torch's distributions over 2026 actions cost more than they catch.
    torch.distributions.Distribution.set_default_validate_args(False)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed % 2**32)


def start(opts: Any, given: set[str]) -> tuple[Run, int | None]:
    """A new run in ``opts.folder()``, or the one saved in ``--resume``; also the step it
    resumes from. The folder must be claimed already (:func:`run_ppo` does it).

    A new run with ``--overwrite`` deletes the previous run's files only once its warm start
    is done, right before its first checkpoint. A resumed run is restored even if it has
    reached its ``--total-steps`` (:func:`run_ppo` refuses to train it further).
    """
    folder = opts.folder()
    if not opts.resume:
        opts.run_dir = str(folder)
        seed_everything(opts.seed, opts.threads)
        run = Run(opts)
        if opts.overwrite and (removed := clear(folder)):
            print(f"--overwrite: deleted the previous run's {', '.join(removed)} in "
                  f"{folder}", file=sys.stderr)
        run.save()  # the warm start is not lost if the run is killed early
        return run, None
    path = folder / CHECKPOINT
    state = load_checkpoint(path)
    if not isinstance(state.get("options"), dict) or "steps" not in state:
        raise CheckpointError(f"{path} holds no training state")
    steps = int(state["steps"])
    opts = resumed_options(opts, given, state["options"])
    opts.run_dir = opts.resume
    seed_everything(opts.seed + steps, opts.threads)
    return Run(opts, state), steps


def duration(seconds: float) -> str:
    """``12 min 04 s``."""
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


def open_metrics(run: Run, resumed_at: int | None) -> MetricsCsv:
    """The run's ``metrics.csv``: a new run's empty; a resumed run's with the rows its
    checkpoint counts, up to ``run.recorded`` (a row written after the checkpoint is played
    again); :class:`~patchwork_env.training.metrics.MetricsError` for a damaged one."""
    if resumed_at is None:
        return MetricsCsv(run.dir / "metrics.csv", None)
    return MetricsCsv(run.dir / "metrics.csv", -1 if run.recorded is None else run.recorded)


def train(run: Run, resumed_at: int | None, csv_log: MetricsCsv) -> int:
    """Train ``run`` to its ``--total-steps`` (recording its evaluations in ``csv_log``),
    export it, draw its curve and report; 0."""
    opts, model = run.opts, run.model
    started = time.time()
    model.set_logger(configure(str(run.dir / "tb"), ["tensorboard"]))
    if resumed_at is not None:
        run.restore_best()  # best.pt as the checkpoint counts it
    where = f"resuming at step {resumed_at:,}" if resumed_at is not None else "new run"
    rollout = opts.n_envs * opts.n_steps
    end = end_step(model.num_timesteps, opts.total_steps, rollout)
    rounded = (f" ({opts.total_steps:,} rounded up to whole rollouts of {rollout:,} moves)"
               if end != opts.total_steps else "")
    print(f"{where}: training to step {end:,}{rounded} in {run.dir}", file=sys.stderr)
    trainer = Trainer(run, csv_log)
    model.learn(opts.total_steps - model.num_timesteps, callback=trainer,
                reset_num_timesteps=False)
    final = run.export("final")
    if opts.plot and csv_log.rows:
        plot_learning_curve(csv_log.path, run.dir / "learning_curve.png")
    model.policy.set_training_mode(False)

    print(f"trained to step {model.num_timesteps:,} in {run.dir} "
          f"({duration(time.time() - started)} this session)")
    last = trainer.last_results
    print(f"last training evaluation (step {last['steps']:,}; {opts.eval_games} games per "
          f"opponent, tournament seed {EVAL_SEED}):")
    for name in ("random", "greedy"):
        print(" ", describe(last[name]))
    at = f" (step {run.best_steps:,})" if run.best_steps is not None else ""
    print(f"best policy: {run.dir / 'best.pt'}, the best of the run's evaluations{at}")
    print(f"final evaluation of {final} on new setups ({opts.final_eval_games} games per "
          f"opponent, tournament seed {FINAL_EVAL_SEED}):")
    for name in ("random", "greedy"):
        result = evaluate_with_bar(model.policy, name, opts.final_eval_games, FINAL_EVAL_SEED,
                                   f"final evaluation vs {name}", opts.progress)
        print(" ", describe(result), flush=True)
    print(f"evaluate the best policy: python evaluate.py ppo:{run.dir / 'best.pt'} random "
          "greedy --games 400")
    return 0


def run_ppo(opts: Any, given: set[str]) -> int:
    """Claim the run folder, start the run and train it; the exit status (2 with one line
    on stderr for a run refused before any work, 1 with one line for a file that cannot be
    written, such as on a full disk, 130 when interrupted)."""
    try:
        held = claim_run(opts, given)
    except (CheckpointError, FolderError) as e:
        return _refused(e)
    with held:
        try:
            run, resumed_at = start(opts, given)
            if resumed_at is not None and run.opts.total_steps <= resumed_at:
                raise FolderError(f"the run in {run.dir} has done {resumed_at:,} steps and "
                                  f"--total-steps is {run.opts.total_steps:,}: nothing to "
                                  "train (pass a larger --total-steps to train on)")
            csv_log = open_metrics(run, resumed_at)
        except (CheckpointError, FolderError, MetricsError) as e:
            return _refused(e)
        except WriteError as e:
            print(f"train.py: error: {e}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("\ntrain.py: interrupted before the run's first checkpoint: nothing was "
                  "saved", file=sys.stderr)
            return INTERRUPTED_STATUS
        try:
            return train(run, resumed_at, csv_log)
        except WriteError as e:
            print(f"train.py: error: {e}; continue from the last checkpoint with --resume "
                  f"{run.dir}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print(f"\ntrain.py: interrupted; continue from the last checkpoint (written every "
                  f"{run.opts.checkpoint_every:,} steps) with --resume {run.dir}",
                  file=sys.stderr)
            return INTERRUPTED_STATUS


def _refused(e: Exception) -> int:
    print(f"train.py: error: {e}", file=sys.stderr)
    return 2


__all__ = ["COMMAND_ONLY", "RESUMABLE", "duration", "open_metrics", "resumed_options", "run_ppo",
           "seed_everything", "start", "train"]
