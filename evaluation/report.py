"""What a tournament leaves behind: printed tables, ``results.json``, ``results.csv``, plots.

Each file is written atomically (:mod:`patchwork_env.files.atomic`): whole, or not at all.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from patchwork_env.evaluation.arena import GameRecord
from patchwork_env.evaluation.tournament import Pairing
from patchwork_env.files.atomic import atomic_open, save_figure, write_text

CSV_COLUMNS = ("pairing", "a", "b", "seed", "player0", "player1", "score0", "score1",
               "winner", "winner_agent", "n_moves", "moves")


def pairings_table(pairings: Sequence[Pairing]) -> str:
    """One row per pairing: games, wins, win rate and Wilson interval, scores."""
    width = max(len(f"{p.a} vs {p.b}") for p in pairings)
    head = (f"{'pairing (a vs b)':<{width}}  games  wins a  win rate a  95% CI          "
            "mean score a / b   mean diff")
    lines = [head, "-" * len(head)]
    for p in pairings:
        ci = f"[{100 * p.ci_a[0]:5.1f}, {100 * p.ci_a[1]:5.1f}]"
        lines.append(f"{p.a + ' vs ' + p.b:<{width}}  {p.games:5d}  {p.wins_a:6d}  "
                     f"{100 * p.win_rate_a:9.1f}%  {ci:<14}  "
                     f"{p.mean_score_a:6.1f} / {p.mean_score_b:6.1f}   {p.mean_diff:+8.1f}")
    return "\n".join(lines)


def ranking_table(elo: dict[str, dict[str, Any]], anchor: str) -> str:
    """The agents by Elo, best first, with their bootstrap intervals."""
    width = max(len(s) for s in elo)
    head = f"rank  {'agent':<{width}}  Elo ({anchor} = 0)  95% CI"
    lines = [head, "-" * (len(head) + 12)]
    ranked = sorted(elo.items(), key=lambda kv: -kv[1]["rating"])
    for rank, (spec, e) in enumerate(ranked, 1):
        lines.append(f"{rank:4d}  {spec:<{width}}  {e['rating']:15.0f}  "
                     f"[{e['ci'][0]:.0f}, {e['ci'][1]:.0f}]")
    return "\n".join(lines)


def write_json(path: Path, specs: Sequence[str], pairings: Sequence[Pairing],
               elo: dict[str, dict[str, Any]], settings: dict[str, Any]) -> None:
    """``results.json``: agents, settings, pairings and Elo (schema in ``evaluate.py``)."""
    doc = {"agents": list(specs), "settings": settings,
           "pairings": [asdict(p) for p in pairings], "elo": elo}
    write_text(path, json.dumps(doc, indent=2) + "\n")


def write_csv(path: Path, pairings: Sequence[Pairing],
              records: dict[int, list[GameRecord]]) -> None:
    """``results.csv``: one row per game, its moves as space-separated action ids."""
    with atomic_open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(CSV_COLUMNS)
        for i, p in enumerate(pairings):
            for r in records[i]:
                seats = (p.a, p.b) if r.seat_a == 0 else (p.b, p.a)
                out.writerow([i, p.a, p.b, r.seed, *seats, *r.scores, r.winner, seats[r.winner],
                              len(r.moves), " ".join(map(str, r.moves))])


def plot_elo(path: Path, elo: dict[str, dict[str, Any]], anchor: str, title: str) -> None:
    """``elo.png``: each agent's rating with its interval, best at the top."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ranked = sorted(elo.items(), key=lambda kv: kv[1]["rating"])
    names = [s for s, _ in ranked]
    rating = np.array([e["rating"] for _, e in ranked])
    lo = np.array([e["ci"][0] for _, e in ranked])
    hi = np.array([e["ci"][1] for _, e in ranked])
    fig, ax = plt.subplots(figsize=(7, 0.6 * len(names) + 1.4))
    ax.errorbar(rating, range(len(names)), xerr=[rating - lo, hi - rating], fmt="o",
                capsize=4, color="#3b6ea8")
    for y, r in enumerate(rating):
        ax.annotate(f"{r:.0f}", (r, y), textcoords="offset points", xytext=(0, 8),
                    ha="center", fontsize=9)
    ax.set_yticks(range(len(names)), names)
    ax.set_ylim(-0.6, len(names) - 0.3)
    ax.set_xlabel(f"Elo ({anchor} = 0), 95% bootstrap interval")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    try:
        save_figure(fig, path, dpi=120)
    finally:
        plt.close(fig)


def plot_scores(path: Path, specs: Sequence[str], pairings: Sequence[Pairing],
                records: dict[int, list[GameRecord]]) -> None:
    """``scores.png``: the distribution of each agent's final scores over all its games,
    the agents left to right in the order of ``specs`` (``evaluate.py`` passes the Elo
    ranking, best first); each violin's centre line is the agent's median score."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    scores: dict[str, list[int]] = {s: [] for s in specs}
    for i, p in enumerate(pairings):
        for r in records[i]:
            scores[p.a].append(r.score_a)
            scores[p.b].append(r.score_b)
    fig, ax = plt.subplots(figsize=(1.6 * len(specs) + 2, 4.4))
    colour, median = "#3b6ea8", "#b03a2e"
    parts = ax.violinplot([scores[s] for s in specs], showmedians=True)
    for key in ("cbars", "cmins", "cmaxes"):
        parts[key].set(color=colour, lw=1.0)
    parts["cmedians"].set(color=median, lw=2.0)
    ax.set_xticks(range(1, len(specs) + 1),
                  [f"{rank}. {s}" for rank, s in enumerate(specs, 1)])
    ax.axhline(0, color="grey", lw=0.8, ls="--")
    ax.legend(handles=[Line2D([], [], color=median, lw=2.0, label="median score"),
                       Line2D([], [], color=colour, lw=1.0, label="lowest to highest"),
                       Line2D([], [], color="grey", lw=0.8, ls="--", label="score 0")],
              loc="best", fontsize=8)
    ax.set_xlabel("agent, by Elo rank")
    ax.set_ylabel("final score")
    ax.set_title("final scores over all games")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    try:
        save_figure(fig, path, dpi=120)
    finally:
        plt.close(fig)
