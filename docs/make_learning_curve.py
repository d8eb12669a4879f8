"""Draw a learning curve for the docs from a training run's metrics, and keep the data.

    python docs/make_learning_curve.py RUN_DIR NAME    # from a run folder
    python docs/make_learning_curve.py docs/NAME.csv NAME  # redraw from the kept data

From a run folder it copies the run's ``metrics.csv`` to ``docs/NAME.csv`` and draws
``docs/NAME.png`` from it with the code ``train.py`` draws ``learning_curve.png`` with, so
that a later change to the picture can be redrawn from ``docs/NAME.csv`` without training
again. Which run each picture comes from is listed in ``docs/pictures.md``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from patchwork_env.files.atomic import WriteError, write_bytes
from patchwork_env.training.metrics import MetricsCsv, MetricsError, plot_learning_curve

DOCS = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    """Copy the metrics (from a run folder) and draw ``docs/NAME.png``; the exit status."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("source", type=Path, help="a run folder, or a metrics csv")
    parser.add_argument("name", help="the picture's name, without .png")
    parser.add_argument("--into", type=Path, default=DOCS,
                        help="the folder for the picture and its data (default: docs/)")
    args = parser.parse_args(argv)
    source = args.source / "metrics.csv" if args.source.is_dir() else args.source
    if not source.is_file():
        print(f"error: no metrics at {source}", file=sys.stderr)
        return 2
    try:
        rows = MetricsCsv.read(source)
    except MetricsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not rows or "win_greedy" not in rows[0]:
        print(f"error: {source} holds no evaluations of a training run", file=sys.stderr)
        return 2
    data, picture = args.into / f"{args.name}.csv", args.into / f"{args.name}.png"
    try:
        if source.resolve() != data.resolve():
            write_bytes(data, source.read_bytes())
        plot_learning_curve(data, picture)
    except WriteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {picture.name} from {len(rows)} evaluations (data: {data.name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
