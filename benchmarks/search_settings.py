"""How the az agent's search settings change its strength at a fixed budget.

    python benchmarks/search_settings.py [--model PATH] [--evaluations 128]
                                         [--opponent mcts:1000] [--games 200] [--jobs 2]
                                         [--seed 0] [--settings JSON [JSON ...]]

Each setting is a JSON object of :class:`~patchwork_env.agents.az.agent.AZAgent` options
(``max_considered``, ``top_k``, ``c_visit``, ``c_scale``, ``score_weight``,
``leaf_playouts``, ``playout_mix``; ``{}`` is the agents' own search). For each, the
network (the shipped one unless ``--model``) searches with ``--evaluations`` network
evaluations per move against ``--opponent`` over ``--games`` paired games: the same setups
for every setting, each played twice with the seats swapped, in ``--jobs`` processes. It
prints a markdown table of win rates with their Wilson 95% intervals and the mean score
difference. The default list is 7 settings of 200 games against ``mcts:1000``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from patchwork_env.agents import make
from patchwork_env.agents.az.agent import DEFAULT_MODEL, AZAgent
from patchwork_env.evaluation.arena import GameRecord, play_match
from patchwork_env.evaluation.ratings import wilson_interval
from patchwork_env.evaluation.tournament import setup_seeds

OPTIONS = ("max_considered", "top_k", "c_visit", "c_scale", "score_weight", "leaf_playouts",
           "playout_mix")
"""The search options a setting may give."""
DEFAULT_SETTINGS = ('{}', '{"c_scale": 0.3}', '{"c_scale": 1.0}', '{"score_weight": 0.5}',
                    '{"max_considered": 8}', '{"top_k": 8}', '{"top_k": 2}')


def read_setting(text: str) -> dict[str, Any]:
    """A setting from its JSON text; ``ValueError`` naming what is wrong with it."""
    try:
        setting = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"setting {text!r} is not JSON: {e}") from None
    if not isinstance(setting, dict):
        raise ValueError(f"setting {text!r} is not a JSON object")
    unknown = sorted(set(setting) - set(OPTIONS))
    if unknown:
        raise ValueError(f"setting {text!r}: unknown option(s) {', '.join(unknown)}; the "
                         f"options are {', '.join(OPTIONS)}")
    return setting


def _init_worker() -> None:
    import numba
    import torch

    numba.set_num_threads(1)  # one core per process
    torch.set_num_threads(1)


def play_share(model: str, evaluations: int, setting: dict[str, Any], opponent: str,
               seeds: list[int], agent_seed: int) -> list[GameRecord]:
    """The searched network against ``opponent`` on ``seeds`` (each twice, seats swapped)."""
    agent = AZAgent(model, evaluations, seed=agent_seed, **setting)
    return play_match(agent, make(opponent, seed=agent_seed + 1), seeds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_MODEL), help="az network file")
    parser.add_argument("--evaluations", type=int, default=128,
                        help="network evaluations per move")
    parser.add_argument("--opponent", default="mcts:1000", help="agent spec to play")
    parser.add_argument("--games", type=int, default=200, help="paired games per setting")
    parser.add_argument("--jobs", type=int, default=2, help="processes")
    parser.add_argument("--seed", type=int, default=0, help="draws the setups")
    parser.add_argument("--settings", nargs="+", default=list(DEFAULT_SETTINGS),
                        metavar="JSON", help="search settings to compare")
    args = parser.parse_args()
    if args.games < 2 or args.games % 2:
        parser.error(f"--games must be even and at least 2, got {args.games}")
    if args.evaluations < 1 or args.jobs < 1:
        parser.error("--evaluations and --jobs must be at least 1")
    if not Path(args.model).is_file():
        parser.error(f"--model: no file at {args.model}")
    try:
        settings = [read_setting(text) for text in args.settings]
        make(args.opponent, seed=0)
    except ValueError as e:
        parser.error(str(e).splitlines()[0])

    seeds = setup_seeds(args.seed, args.games)
    shares = [s.tolist() for s in np.array_split(seeds, args.jobs) if len(s)]
    network = "the shipped network" if args.model == str(DEFAULT_MODEL) else args.model
    print(f"az:{args.evaluations} ({network}) against {args.opponent}, {args.games} paired "
          f"games per setting\n")
    print("| setting | wins | win rate | 95% CI | mean score difference | seconds |")
    print("|---|---:|---:|---|---:|---:|")
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(len(shares), context, initializer=_init_worker) as pool:
        for text, setting in zip(args.settings, settings, strict=True):
            start = time.perf_counter()
            futures = [pool.submit(play_share, args.model, args.evaluations, setting,
                                   args.opponent, share, 2 * k + 1)
                       for k, share in enumerate(shares)]
            records = [r for f in futures for r in f.result()]
            wins = sum(r.a_won for r in records)
            low, high = wilson_interval(wins, len(records))
            diff = np.mean([r.score_a - r.score_b for r in records])
            print(f"| `{text}` | {wins}/{len(records)} | {wins / len(records):.1%} | "
                  f"[{low:.1%}, {high:.1%}] | {diff:+.1f} | "
                  f"{time.perf_counter() - start:.0f} |", flush=True)


if __name__ == "__main__":
    main()
