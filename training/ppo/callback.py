"""The periodic work of a training run around PPO's updates, as an SB3 callback.

After every update the :class:`Trainer` adds a snapshot of the learner to the pool now
and then, evaluates it against ``random`` and ``greedy`` (logging the results to
``metrics.csv`` and TensorBoard and exporting the best policy), and writes checkpoints;
while the games are played it counts the learner's wins against each kind of opponent.

Its progress bar counts learner moves up to the step the run will really end at (whole
rollouts: :func:`end_step`), and keeps moving through the long pauses between rollouts:
during an update it counts the minibatches (through a hook on the optimiser's steps, as
SB3 has no callback there), during an evaluation the turns played.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from tqdm import tqdm

from patchwork_env.training.evaluation import evaluate
from patchwork_env.training.metrics import MetricsCsv
from patchwork_env.training.ppo.pool import OpponentPool


class TrainingRun(Protocol):
    """What the trainer needs of a run (``train.Run``)."""

    opts: Any
    """The run's options (``train.Options``)."""
    model: MaskablePPO
    pool: OpponentPool
    updates: int
    best: float
    best_steps: int | None
    """The step of the evaluation that chose ``best.pt`` (None before the first)."""
    recorded: int | None
    """The step of the last row in ``metrics.csv`` (None before the first)."""

    def save(self) -> None:
        """Write the checkpoint."""

    def export(self, name: str) -> Path:
        """Save the policy as ``name.pt`` and ``name.zip`` in the run folder."""

    def keep_best(self) -> None:
        """Export the policy as the best one, and keep its weights for the checkpoint."""


def next_multiple(steps: int, every: int) -> int:
    """The first multiple of ``every`` after ``steps``."""
    return (steps // every + 1) * every


def end_step(start: int, total: int, rollout: int) -> int:
    """The step a run from ``start`` towards ``total`` ends at: PPO collects whole rollouts
    of ``rollout`` moves, so the last one can carry it past ``total``."""
    return start + -(-max(total - start, 0) // rollout) * rollout


class Trainer(BaseCallback):
    """The periodic work around PPO's updates: snapshots, evaluations, logs, checkpoints."""

    def __init__(self, run: TrainingRun, csv_log: MetricsCsv) -> None:
        super().__init__()
        self.run = run
        self.opts = run.opts
        self.csv = csv_log
        self.outcomes: dict[str, list[bool]] = {"random": [], "greedy": [], "self": []}
        self.start_steps = self.last_update = run.model.num_timesteps
        self.start_time = time.time()
        self.next_eval = next_multiple(self.start_steps, self.opts.eval_every)
        self.next_checkpoint = next_multiple(self.start_steps, self.opts.checkpoint_every)
        self.scores = ""
        """The latest evaluation's win rates, as the bar shows them."""
        self.minibatches: int | None = None
        """Minibatches of the update under way (None between updates)."""
        self.end = end_step(self.start_steps, self.opts.total_steps,
                            self.opts.n_envs * self.opts.n_steps)
        self.last_results: dict[str, Any] = {}
        """The latest evaluation's results by opponent (see :meth:`evaluate`)."""
        self.bar = tqdm(total=self.end, initial=self.start_steps, unit="step",
                        disable=not self.opts.progress, dynamic_ncols=True, smoothing=0.05,
                        desc="self-play")

    def _on_step(self) -> bool:
        for done, info in zip(self.locals["dones"], self.locals["infos"], strict=True):
            if done and "opponent" in info:
                kind = info["opponent"] if info["opponent"] in self.outcomes else "self"
                self.outcomes[kind].append(bool(info["is_success"]))
        self.bar.update(self.model.num_timesteps - self.bar.n)
        return True

    def _on_training_start(self) -> None:
        # PPO's update has no callback of its own: count its optimiser steps (one per
        # minibatch) so that the bar moves while it runs.
        self._hook = self.model.policy.optimizer.register_step_post_hook(self._on_minibatch)
        if self.start_steps == 0 and self.run.recorded is None:
            self.evaluate(0)  # where self-play starts from (after the warm start)

    def _on_rollout_start(self) -> None:
        self.minibatches = None
        if self.model.num_timesteps > self.start_steps:
            self.after_update()
        self.bar.set_postfix_str(self.scores, refresh=False)

    def _on_rollout_end(self) -> None:
        self.minibatches = 0
        self._show_update()

    def _on_minibatch(self, *_: Any) -> None:
        if self.minibatches is not None:
            self.minibatches += 1
            self._show_update()

    def _show_update(self) -> None:
        rollout = self.opts.n_envs * self.opts.n_steps
        total = self.opts.n_epochs * -(-rollout // self.opts.batch_size)
        self.bar.set_postfix_str(f"update {self.run.updates + 1}: minibatch "
                                 f"{self.minibatches}/{total} over the last {rollout:,} moves")

    def _on_training_end(self) -> None:
        self._hook.remove()
        self.minibatches = None
        self.after_update()
        self.bar.close()

    def after_update(self) -> None:
        """Called once the update following each rollout is done."""
        run, opts = self.run, self.opts
        steps = self.model.num_timesteps
        if steps == self.last_update:  # training ended right after an update
            return
        self.last_update = steps
        run.updates += 1
        if run.updates % opts.snapshot_every == 0:
            run.pool.add_snapshot(self.model.policy, f"self-{run.updates}")
        done = steps >= opts.total_steps
        if steps >= self.next_eval or done:
            self.next_eval = next_multiple(steps, opts.eval_every)
            self.evaluate(steps)
        if steps >= self.next_checkpoint or done:
            self.next_checkpoint = next_multiple(steps, opts.checkpoint_every)
            run.save()

    def evaluate(self, steps: int) -> None:
        """Play the evaluation matches, then log them and keep the best policy."""
        policy = self.model.policy
        policy.set_training_mode(False)
        games = self.opts.eval_games
        results = {}
        for name in ("random", "greedy"):
            def progress(finished: int, turns: int, name: str = name) -> None:
                self.bar.set_postfix_str(f"evaluating vs {name}: turn {turns}, "
                                         f"{finished}/{games} games over")

            results[name] = evaluate(policy, name, games, progress=progress)
        self.last_results = {"steps": steps, **results}
        score = results["greedy"].win_rate_a + results["random"].win_rate_a / 100
        if score > self.run.best:
            self.run.best = score
            self.run.best_steps = steps
            self.run.keep_best()
        elapsed = time.time() - self.start_time
        row: dict[str, Any] = {"steps": steps, "updates": self.run.updates,
                               "wall_s": round(elapsed, 1),
                               "steps_per_s": (steps - self.start_steps) / max(elapsed, 1e-9),
                               "pool_size": len(self.run.pool.snapshots)}
        for name, res in results.items():
            lo, hi = res.ci_a
            row.update({f"win_{name}": res.win_rate_a, f"win_{name}_lo": lo,
                        f"win_{name}_hi": hi})
            self.logger.record(f"eval/win_{name}", res.win_rate_a)
            self.logger.record(f"eval/win_{name}_lo", lo)
            self.logger.record(f"eval/win_{name}_hi", hi)
        for kind, wins in self.outcomes.items():
            rate = float(np.mean(wins)) if wins else float("nan")
            row[f"train_win_{kind}"] = rate
            if wins:
                self.logger.record(f"train/win_{kind}", rate)
            wins.clear()
        self.csv.append(row)  # before the checkpoint that counts it (see training.metrics)
        self.run.recorded = steps
        self.scores = (f"last evaluation: vs random {results['random'].win_rate_a:.0%}, "
                       f"vs greedy {results['greedy'].win_rate_a:.0%}")
        self.bar.set_postfix_str(self.scores)
