"""Draw the losses of consecutive az runs, one after the other, to show a change between them
(such as a lower learning rate).

    python docs/make_loss_curve.py docs/az_continued_learning_curve.csv:1e-3 \\
        docs/az_finetuned_learning_curve.csv:1e-4 --from-iteration 121 \\
        --out docs/az_learning_rate_losses.png

Each source is a run's ``metrics.csv`` with its learning rate after the last colon (the
legends name each line by it, so it may say more: ``1e-4 (run 4)``); each run's iterations
are counted on from the previous one's last. The picture has the policy loss (with
the improved-policy target's entropy, its floor) on the left and the value loss on the
right, per iteration, a line per run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from patchwork_env.files.atomic import save_figure
from patchwork_env.training.az.monitor import read_metrics


def main(argv: list[str] | None = None) -> int:
    """Draw the picture; the exit status."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("sources", nargs="+", help="CSV:LEARNING_RATE, in the order the runs ran")
    parser.add_argument("--from-iteration", type=int, default=1,
                        help="first iteration drawn, counted over all the runs")
    parser.add_argument("--out", type=Path, required=True, help="the picture (.png)")
    args = parser.parse_args(argv)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    offset = 0
    for source in args.sources:
        path, sep, label = source.rpartition(":")
        if not sep or not Path(path).is_file():
            print(f"{source}: give an existing metrics CSV and its learning rate, "
                  "CSV:LEARNING_RATE", file=sys.stderr)
            return 2
        every = read_metrics(Path(path))
        rows = [r for r in every if int(r["iteration"]) + offset >= args.from_iteration]
        x = [int(r["iteration"]) + offset for r in rows]
        line, = left.plot(x, [float(r["policy_loss"]) for r in rows],
                          label=f"policy, learning rate {label}")
        left.plot(x, [float(r["target_entropy"]) for r in rows], color=line.get_color(),
                  linestyle=":", label=f"target entropy, {label}")
        right.plot(x, [float(r["value_loss"]) for r in rows], color=line.get_color(),
                   label=f"learning rate {label}")
        offset += max((int(r["iteration"]) for r in every), default=0)
    left.set(title="policy loss (cross-entropy to the search)", xlabel="iteration")
    right.set(title="value loss (squared error to the result)", xlabel="iteration")
    for ax in (left, right):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, args.out, dpi=110)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
