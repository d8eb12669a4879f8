"""Draw runs that differ in one option side by side, over their training time.

    python docs/make_comparison_curves.py "none=docs/compare/base.csv" \\
        "aux heads=docs/compare/aux.csv" --out docs/compare/curves.png

Each source is ``LABEL=CSV``, a run's ``metrics.csv`` (copy it beside the picture to keep
it). The x axis is each run's training time (``train_s``: warm start, self-play and
learning, its evaluations excluded), so runs that play faster or slower stand where an
hour of training takes them. The panels: the value loss, the policy loss (each against
its own targets, so they compare runs whose targets are alike) and the searched agent's
win rate against the first opponent the runs were evaluated against, with its 95%
interval.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from patchwork_env.files.atomic import save_figure
from patchwork_env.training.az.monitor import plot_win_rate, read_metrics, win_rate_series


def draw(runs: list[tuple[str, list[dict[str, str]]]], out: Path) -> None:
    """The picture of ``(label, metrics rows)`` pairs."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    opponent = next((k[len("az_vs_"):] for k in runs[0][1][0] if k.startswith("az_vs_")
                     and not k.endswith(("_lo", "_hi"))), None) if runs[0][1] else None
    for k, (label, rows) in enumerate(runs):
        colour = f"C{k}"
        minutes = [float(r["train_s"]) / 60 for r in rows]
        for ax, column in zip(axes[:2], ("value_loss", "policy_loss"), strict=True):
            ax.plot(minutes, [float(r[column]) for r in rows], color=colour, label=label)
        if opponent is not None:
            plot_win_rate(axes[2], win_rate_series(rows, f"az_vs_{opponent}", "train_s"), "-",
                          colour, label)
    for ax, title in zip(axes, ("value loss", "policy loss",
                                f"searched agent vs {opponent} (training's evaluations)"),
                         strict=True):
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("training minutes")
        ax.grid(alpha=0.3)
    axes[2].set_ylim(0, 1)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, out)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    """Draw the picture; the exit status."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("sources", nargs="+", help="LABEL=CSV, one per run")
    parser.add_argument("--out", type=Path, required=True, help="the picture (.png)")
    args = parser.parse_args(argv)
    runs = []
    for source in args.sources:
        label, sep, path = source.partition("=")
        if not sep or not Path(path).is_file():
            parser.error(f"{source!r} is not LABEL=CSV with an existing CSV")
        runs.append((label, read_metrics(Path(path))))
    draw(runs, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
