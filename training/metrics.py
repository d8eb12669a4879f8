"""What a training run logs: ``metrics.csv`` (one row per evaluation) and its learning curve."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np

CSV_FIELDS = ("steps", "updates", "wall_s", "steps_per_s", "win_random", "win_random_lo",
              "win_random_hi", "win_greedy", "win_greedy_lo", "win_greedy_hi",
              "train_win_random", "train_win_greedy", "train_win_self", "pool_size")


class MetricsCsv:
    """``metrics.csv``: one row per evaluation; a resumed run drops the rows it will redo."""

    def __init__(self, path: Path, resume_from: int | None) -> None:
        self.path = path
        rows = self.read(path) if resume_from is not None and path.exists() else []
        rows = [r for r in rows if int(float(r["steps"])) <= (resume_from or 0)]
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, CSV_FIELDS)
            writer.writeheader()
            writer.writerows(rows)

    @staticmethod
    def read(path: Path) -> list[dict[str, str]]:
        """The rows of a ``metrics.csv``, as strings."""
        with open(path, newline="") as f:
            return list(csv.DictReader(f))

    def append(self, row: dict[str, Any]) -> None:
        """Add one evaluation's row (floats to four decimals)."""
        with open(self.path, "a", newline="") as f:
            csv.DictWriter(f, CSV_FIELDS).writerow(
                {k: f"{v:.4f}" if isinstance(v, float) else v for k, v in row.items()})


def plot_learning_curve(csv_path: Path, out: Path) -> None:
    """Win rates (with their 95% intervals) against random and greedy over the steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = MetricsCsv.read(csv_path)
    steps = np.array([float(r["steps"]) for r in rows])
    fig, ax = plt.subplots(figsize=(7, 4), dpi=120)
    for name, colour in (("random", "tab:blue"), ("greedy", "tab:red")):
        rate, lo, hi = (np.array([float(r[f"win_{name}{s}"]) for r in rows])
                        for s in ("", "_lo", "_hi"))
        ax.plot(steps, rate, color=colour, label=f"vs {name}")
        ax.fill_between(steps, lo, hi, color=colour, alpha=0.2)
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set(xlabel="learner moves", ylabel="win rate (paired games)", ylim=(0, 1),
           title="Self-play MaskablePPO on Patchwork")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
