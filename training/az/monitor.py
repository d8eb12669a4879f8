"""What a search-guided run shows and keeps of its progress: ``metrics.csv``, TensorBoard
scalars, a progress bar, the evaluations during training and the learning curve.

Every iteration adds a row to ``metrics.csv`` (losses, speed, the tree / network split;
a :class:`~patchwork_env.training.metrics.MetricsLog`, each row written before the
checkpoint of its iteration)
and the same numbers to TensorBoard (``tb/``). Every ``eval_every`` iterations the current
network plays paired games against each evaluation opponent, as ``evaluate.py`` would
(the same setup seeds, seats swapped, Wilson intervals), both with its search
(``az:SIMS``) and as its raw policy (``az-policy``); the win rates go into the row and
``learning_curve.png`` is redrawn: win rate against the run's training time (self-play and
learning, evaluations excluded).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from patchwork_env import agents
from patchwork_env.agents.az.agent import AZAgent, AZPolicyAgent
from patchwork_env.agents.az.net import AZNet
from patchwork_env.evaluation.arena import play_match
from patchwork_env.evaluation.tournament import setup_seeds, summarise
from patchwork_env.files.atomic import save_figure
from patchwork_env.training.metrics import MetricsLog, read_metrics

METRICS = "metrics.csv"
CURVE = "learning_curve.png"
TENSORBOARD = "tb"
EVAL_SEED = 1
"""The tournament seed of the evaluations during training (as for PPO runs)."""
BASE_FIELDS = ("iteration", "games", "samples", "buffer", "learner_steps", "train_s", "wall_s",
               "learning_rate", "policy_loss", "value_loss", "target_entropy", "score_loss",
               "ownership_loss", "selfplay_s",
               "playout_s", "learn_s", "positions_per_s", "evaluations_per_s", "tree_fraction",
               "player0_wins", "mean_abs_score_diff")


def eval_fields(opponents: Sequence[str]) -> list[str]:
    """The evaluation columns: for each opponent, the search's and the raw policy's win
    rate with its interval."""
    names = []
    for opponent in opponents:
        for who in ("az", "policy"):
            names += [f"{who}_vs_{opponent}{s}" for s in ("", "_lo", "_hi")]
    return names


def evaluate_net(net: AZNet, evaluations: int, opponents: Sequence[str], games: int,
                 seed: int = EVAL_SEED, rules: str = "default") -> dict[str, float]:
    """Win rates of ``net`` with search (``evaluations`` per move) and without against each
    opponent, over ``games`` paired games of the network's game; keys as
    :func:`eval_fields`."""
    row: dict[str, float] = {}
    seeds = setup_seeds(seed, games)
    for opponent in opponents:
        for who, agent in (("az", AZAgent(net, evaluations, seed=seed)),
                           ("policy", AZPolicyAgent(net, seed=seed))):
            rival = agents.make(opponent, seed=seed, game=net.game)
            pairing = summarise(who, opponent,
                                play_match(agent, rival, seeds, rules, game=net.game))
            key = f"{who}_vs_{opponent}"
            row[key] = pairing.win_rate_a
            row[key + "_lo"], row[key + "_hi"] = pairing.ci_a
    return row


class Monitor:
    """The run's records in ``folder``; a resumed run keeps the rows up to its iteration."""

    def __init__(self, folder: Path, opponents: Sequence[str], total: int, done: int,
                 resume: bool, show_bar: bool = True) -> None:
        self.folder = folder
        self.opponents = list(opponents)
        self.fields = list(BASE_FIELDS) + eval_fields(self.opponents)
        self.path = folder / METRICS
        self.log = MetricsLog(self.path, self.fields, done if resume else None,
                              number_format=".6g", other_columns=True)
        from torch.utils.tensorboard import SummaryWriter

        self.tb = SummaryWriter(str(folder / TENSORBOARD), purge_step=done + 1)
        self.bar = tqdm(total=total, initial=done, unit="iteration", desc="az self-play",
                        disable=not show_bar, file=sys.stderr, dynamic_ncols=True)

    def record(self, row: dict[str, Any]) -> None:
        """Add an iteration's row to the CSV (rewritten whole, atomically), TensorBoard and
        the bar."""
        self.log.append(row)
        step = int(row["iteration"])
        for key, value in row.items():
            if key != "iteration" and isinstance(value, int | float):
                self.tb.add_scalar(_tb_name(key), value, step)
        self.tb.flush()
        postfix = {"policy": f"{row['policy_loss']:.3f}", "value": f"{row['value_loss']:.3f}",
                   "pos/s": f"{row['positions_per_s']:.0f}"}
        for opponent in self.opponents:
            if f"az_vs_{opponent}" in row:
                postfix[f"vs {opponent}"] = f"{row[f'az_vs_{opponent}']:.0%}"
        self.bar.set_postfix(postfix, refresh=False)
        self.bar.update(1)
        if any(f"az_vs_{o}" in row for o in self.opponents):
            plot_curve(self.path, self.folder / CURVE, self.opponents)

    def close(self) -> None:
        """Flush and close the bar and TensorBoard."""
        self.bar.close()
        self.tb.close()


def _tb_name(key: str) -> str:
    if "_vs_" in key:
        return f"eval/{key}"
    if key.endswith("_loss") or key == "target_entropy":
        return f"loss/{key}"
    return f"selfplay/{key}"


def win_rate_series(rows: list[dict[str, str]], key: str, clock: str
                    ) -> tuple[np.ndarray, ...]:
    """``(minutes, rate, lo, hi)`` of the rows that hold ``key`` (a win-rate column with
    its ``_lo`` / ``_hi`` interval) and the seconds column ``clock``."""
    rows = [r for r in rows if r.get(key) and r.get(clock)]
    minutes = np.array([float(r[clock]) / 60 for r in rows])
    rate, lo, hi = (np.array([float(r[key + s]) for r in rows]) for s in ("", "_lo", "_hi"))
    return minutes, rate, lo, hi


def plot_win_rate(ax: Any, series: tuple[np.ndarray, ...], style: str, colour: str,
                  label: str) -> None:
    """One win-rate curve of :func:`win_rate_series` with its interval shaded."""
    minutes, rate, lo, hi = series
    ax.plot(minutes, rate, style, color=colour, marker=".", label=label)
    ax.fill_between(minutes, lo, hi, color=colour, alpha=0.12)


def finish_win_rate_plot(fig: Any, ax: Any, xlabel: str, title: str, out: Path) -> None:
    """The even line, labels, legend and grid of a win-rate picture; saved to ``out``."""
    import matplotlib.pyplot as plt

    ax.axhline(0.5, color="grey", lw=0.8, ls=":")
    ax.set(xlabel=xlabel, ylabel="win rate (paired games, 95% CI)", ylim=(0, 1), title=title)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    try:
        save_figure(fig, out)
    finally:
        plt.close(fig)


def plot_curve(csv_path: Path, out: Path, opponents: Sequence[str]) -> None:
    """Win rate (95% intervals shaded) of the search and the raw policy against each
    evaluation opponent, over the run's training time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = read_metrics(csv_path)
    if not any(r.get(f"az_vs_{opponents[0]}") for r in rows):
        return
    fig, ax = plt.subplots(figsize=(7, 4), dpi=120)
    colours = iter(["tab:red", "tab:purple", "tab:green", "tab:orange", "tab:brown"])
    for opponent in opponents:
        colour = next(colours, "tab:grey")
        for who, style, name in (("az", "-", "search"), ("policy", "--", "raw policy")):
            plot_win_rate(ax, win_rate_series(rows, f"{who}_vs_{opponent}", "train_s"), style,
                          colour, f"{name} vs {opponent}")
    finish_win_rate_plot(fig, ax, "training time (minutes; evaluations excluded)",
                         "Search-guided self-play on Patchwork", out)
