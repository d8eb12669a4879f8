"""Draw the time-to-strength picture: win rate against greedy over wall-clock time, of a
search-guided (az) run and a PPO run trained from scratch on the same machine.

    python docs/make_time_to_strength.py --az runs/az-seed0 --ppo runs/ppo-seed0
    python docs/make_time_to_strength.py --az docs/time_to_strength_az.csv \\
        --ppo docs/time_to_strength_ppo.csv          # redraw from the kept data

Each source is a run folder (its ``metrics.csv`` is copied beside the picture as
``docs/time_to_strength_{az,ppo}.csv``) or such a kept copy. The x axis is time from the
start of each run: for the az run its training time (``train_s``: warm start, self-play
and learning; its evaluations, which play searched games, excluded), for PPO its
wall-clock (``wall_s``, which includes its own short evaluations but starts after its
warm start: ``--ppo-warm-start-min`` shifts its curve by that time). For the az run it
draws the search (``az:SIMS``) and the raw policy against each opponent it was evaluated
against; for PPO, its policy against greedy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from patchwork_env.files.atomic import write_bytes
from patchwork_env.training.az.monitor import (
    finish_win_rate_plot,
    plot_win_rate,
    win_rate_series,
)
from patchwork_env.training.metrics import MetricsError
from patchwork_env.training.metrics import read_metrics as read_records

DOCS = Path(__file__).resolve().parent
NAME = "time_to_strength"


def _rows(source: Path, kind: str, into: Path) -> list[dict[str, str]]:
    csv_path = source / "metrics.csv" if source.is_dir() else source
    if not csv_path.is_file():
        raise FileNotFoundError(f"no metrics.csv at {source}")
    kept = into / f"{NAME}_{kind}.csv"
    if csv_path.resolve() != kept.resolve():
        write_bytes(kept, csv_path.read_bytes())
    return read_records(kept)


def draw(az: list[dict[str, str]], ppo: list[dict[str, str]], out: Path,
         ppo_warm_start_min: float = 0.0) -> None:
    """The picture, from the two runs' rows; PPO's curve starts ``ppo_warm_start_min``
    late (its ``wall_s`` counts from the end of its warm start)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=120)
    opponents = sorted({k[len("az_vs_"):] for k in az[0] if k.startswith("az_vs_")
                        and not k.endswith(("_lo", "_hi"))}) if az else []
    colours = {"greedy": "tab:red", "mcts:100": "tab:purple"}
    for opponent in opponents:
        colour = colours.get(opponent, "tab:green")
        for who, style, label in (("az", "-", "az search"), ("policy", "--", "az raw policy")):
            plot_win_rate(ax, win_rate_series(az, f"{who}_vs_{opponent}", "train_s"), style,
                          colour, f"{label} vs {opponent}")
    minutes, *rates = win_rate_series(ppo, "win_greedy", "wall_s")
    plot_win_rate(ax, (minutes + ppo_warm_start_min, *rates), "-", "tab:blue",
                  f"PPO vs greedy (after {ppo_warm_start_min:.0f} min of warm start)")
    finish_win_rate_plot(fig, ax, "minutes from the start of the run (az: evaluations "
                         "excluded)", "Time to strength on 2 shared CPU cores: "
                         "search-guided self-play vs PPO", out)


def main(argv: list[str] | None = None) -> int:
    """Copy both runs' metrics beside the picture and draw it; the exit status."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--az", type=Path, required=True, help="an az run folder or its csv")
    parser.add_argument("--ppo", type=Path, required=True, help="a PPO run folder or its csv")
    parser.add_argument("--ppo-warm-start-min", type=float, default=0.0,
                        help="minutes the PPO run spent imitating its teacher before its "
                        "wall_s starts counting (read from its log)")
    parser.add_argument("--into", type=Path, default=DOCS,
                        help="the folder for the picture and its data (default: docs/)")
    args = parser.parse_args(argv)
    try:
        args.into.mkdir(parents=True, exist_ok=True)
        az, ppo = _rows(args.az, "az", args.into), _rows(args.ppo, "ppo", args.into)
    except (OSError, KeyError, MetricsError) as e:
        print(f"make_time_to_strength.py: error: {e}", file=sys.stderr)
        return 2
    out = args.into / f"{NAME}.png"
    draw(az, ppo, out, args.ppo_warm_start_min)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
