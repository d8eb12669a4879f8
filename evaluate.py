"""Tournaments between agents: paired games, win rates, Elo ratings and plots.

    python evaluate.py [AGENT ...] [--game {patchwork,draft}] [--games N] [--seed S]
                       [--rules PRESET] [--jobs J] [--device DEVICE] [--out DIR [--overwrite]]

Every pair of agents plays ``N`` games: ``N / 2`` setups (circle and first player), each
played twice with the seats swapped. With no AGENT the default tournament runs
``random greedy mcts:100 mcts:1000``, plus ``ppo`` and ``az`` where their shipped models
exist.
Agents are registry specs (listed by ``--help``), e.g. ``greedy``, ``mcts:400``,
``mcts:1s``, ``ppo:runs/x/best.pt``.
``--game draft`` plays Patchwork Draft instead (section 13 of the rules; a setup is then a
deck order and first player): its agents are ``random``, ``greedy`` and ``mcts[:N|:Ss]``
(default tournament ``random greedy mcts:200``) and its rules presets ``default`` and
``no-stars``; an agent or preset of the other game is refused with a one-line error.
Games run in ``J`` processes, one core each (default: every core available); the results
do not depend on ``J`` except for agents on a time budget. The agents that run a network
(``az``, ``az-playouts``, ``az-policy``, ``ppo``, ``ppo-sample``) run it on ``--device``
(default ``cpu``, so that the results do not depend on the machine), or on their spec's
own ``@DEVICE`` (``az:64@cuda``); a device this machine lacks is refused before any game.

Printed: a table with one row per pairing (games, wins, win rate with its Wilson 95%
interval, mean scores, mean score difference) and the ranking by Elo. Written to a new
folder ``results/<date>_<time>`` (``results/2025-01-31_142501``; ``-2``, ``-3`` ... added
if that exists), so no earlier tournament is ever replaced, or to ``--out DIR``, which is
refused if it already holds results unless ``--overwrite`` is given. The folder is claimed
before the first game (:mod:`patchwork_env.files.claim`): a second evaluation started on a
folder in use refuses at once, and a tournament that is refused, fails or is interrupted
leaves nothing behind. The folder holds:

``results.json``
    ``{"agents": [spec, ...],
    "settings": {"game", "games", "seed", "rules", "jobs", "device", "anchor",
    "runtime_s"},
    "pairings": [{"a", "b", "games", "wins_a", "wins_b", "win_rate_a", "ci_a": [lo, hi],
    "mean_score_a", "mean_score_b", "mean_diff"}, ...],
    "elo": {spec: {"rating", "ci": [lo, hi]}, ...}}`` — win rates and intervals are
    fractions, ``mean_diff`` is the mean of a's score minus b's, ratings are Bradley–Terry
    maximum-likelihood Elo over all games with ``random`` (else the first agent) at 0 and
    95% bootstrap intervals.
``results.csv``
    one row per game: pairing, a, b, seed, player0, player1 (the agents in each seat),
    score0, score1, winner (seat), winner_agent, n_moves, moves (action ids, in order;
    ``Game.new(seed)``, or ``DraftGame.new(seed)`` for the draft, and these moves replay
    the game).
``elo.png``, ``scores.png``
    the ratings with their intervals; each agent's distribution of final scores, in the
    order of the Elo ranking.

Bad input (an unknown agent, a missing or corrupt checkpoint, a nonsense option, an output
folder that cannot be written) stops the program with a one-line message and exit status
2 before any game is played, and leaves nothing behind.

The four files are written as one (:func:`patchwork_env.files.atomic.together`), before
anything about the games is printed: each whole, all or none. A tournament that cannot
write them (a full disk) ends with a one-line error and exit status 1, leaves the folder's
earlier files as they were and removes a folder it created. When the reader of the output
goes away (``evaluate.py | head -1``) the program ends quietly at its next print, with exit
status 141 (as a program stopped by ``SIGPIPE``), its results already written. A Ctrl-C
ends it with one line and exit status 130, a ``SIGTERM`` (``kill PID``) the same way with
143; either writes no results.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

from patchwork_env.agents import (
    DRAFT_SPECS,
    GAME_NAMES,
    GAMES,
)
from patchwork_env.agents.shipped import AZ_MODEL, PPO_MODEL
from patchwork_env.cli.common import (
    HELP_WIDTH,
    ArgumentParser,
    build_agent,
    check_device,
    check_rules,
    fail,
    specs_help,
)
from patchwork_env.data.draft_rules import DRAFT_PRESETS
from patchwork_env.evaluation.report import (
    pairings_table,
    plot_elo,
    plot_scores,
    ranking_table,
    write_csv,
    write_json,
)
from patchwork_env.evaluation.tournament import MAX_GAMES, elo_table, round_robin
from patchwork_env.files.atomic import WriteError, together
from patchwork_env.files.claim import Claim, claim
from patchwork_env.files.folders import FolderError, existing
from patchwork_env.files.stdout import ends_quietly_when_stdout_closes
from patchwork_env.files.termination import INTERRUPTED_STATUS, stops_on_sigterm_as_on_ctrl_c

DEFAULT_AGENTS = ("random", "greedy", "mcts:100", "mcts:1000")
DEFAULT_DRAFT_AGENTS = ("random", "greedy", "mcts:200")
"""The default tournament of ``--game draft``."""
DEFAULT_GAMES = 100
RESULTS_ROOT = Path("results")
"""Where a tournament without ``--out`` writes its new folder."""
OUTPUTS = ("results.json", "results.csv", "elo.png", "scores.png")
"""The files a tournament writes."""


def default_agents() -> list[str]:
    """The default tournament: :data:`DEFAULT_AGENTS`, plus ``ppo`` and ``az`` where their
    shipped models exist."""
    return [*DEFAULT_AGENTS, *(["ppo"] if PPO_MODEL.exists() else []),
            *(["az"] if AZ_MODEL.exists() else [])]


def draft_help() -> str:
    """The agent specs and rules presets of ``--game draft``, for the end of ``--help``."""
    width = max(len(spec.usage) for spec in DRAFT_SPECS)
    lines = ["with --game draft (Patchwork Draft), agent specs (AGENT):"]
    for spec in DRAFT_SPECS:
        lines += textwrap.wrap(spec.help, HELP_WIDTH, initial_indent=f"  {spec.usage:<{width}}  ",
                               subsequent_indent=" " * (width + 4))
    lines.append("with --game draft, rules presets (--rules):")
    for name, rules in DRAFT_PRESETS.items():
        lines += textwrap.wrap(rules.describe_stars(), HELP_WIDTH,
                               initial_indent=f"  {name:<{width}}  ",
                               subsequent_indent=" " * (width + 4))
    return "\n".join(lines)


def check_game_rules(game: str, rules: str) -> str:
    """``rules`` if it is a preset of ``game``, else a one-line exit naming both."""
    if game == "patchwork":
        return check_rules(rules)
    if rules not in DRAFT_PRESETS:
        fail(f"unknown rules preset {rules!r} for --game {game} ({GAME_NAMES[game]}): choose "
             f"from {', '.join(DRAFT_PRESETS)}")
    return rules


def available_cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def results_in(folder: Path) -> list[str]:
    """The tournament results (:data:`OUTPUTS`) found in ``folder``."""
    return existing(folder, OUTPUTS)


def claim_out(out: Path, overwrite: bool) -> Claim:
    """The claim on ``--out DIR``: refused if it holds results, unless ``overwrite``."""
    return claim(out, overwrite=overwrite, contents=results_in, what="results",
                 advice="choose another --out, or pass --overwrite to replace them")


def claim_new_results_folder(started: float, root: Path = RESULTS_ROOT) -> Claim:
    """The claim on a new folder ``root/<date>_<time>`` for a tournament started at
    ``started`` (``time.time()``), adding ``-2``, ``-3`` ... if the name is taken."""
    stamp = time.strftime("%Y-%m-%d_%H%M%S", time.localtime(started))
    for n in range(1, 10_000):
        folder = root / (stamp if n == 1 else f"{stamp}-{n}")
        if folder.exists():
            continue
        try:
            return claim(folder, contents=results_in, what="results")
        except FolderError:
            if folder.exists():  # another evaluation took the name at the same moment
                continue
            raise
    raise FolderError(f"no free folder name left for {root / stamp}")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The parsed and checked command line (bad input exits with status 2)."""
    parser = ArgumentParser(prog="evaluate.py", description=(__doc__ or "").split("\n")[0],
                            epilog=f"{specs_help()}\n{draft_help()}",
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("agents", nargs="*", metavar="AGENT",
                        help="agent specs, listed below (default: " + " ".join(DEFAULT_AGENTS)
                        + ", and ppo and az when their shipped models are installed; with "
                        "--game draft: " + " ".join(DEFAULT_DRAFT_AGENTS) + ")")
    parser.add_argument("--game", choices=GAMES, default="patchwork",
                        help="the game played: patchwork, or draft (Patchwork Draft) "
                        "(default: patchwork)")
    parser.add_argument("--games", type=int, metavar="N", default=DEFAULT_GAMES,
                        help=f"games per pairing, even, at most {MAX_GAMES:,} "
                        f"(default: {DEFAULT_GAMES})")
    parser.add_argument("--seed", type=int, metavar="S", default=0,
                        help="tournament seed, 0 or more (default: 0)")
    parser.add_argument("--rules", default="default", metavar="PRESET",
                        help="rules preset, listed below (default: default)")
    parser.add_argument("--out", type=Path, metavar="DIR", default=None,
                        help="folder for the results (default: a new folder "
                        f"{RESULTS_ROOT}/<date>_<time>); refused if it holds results "
                        "already, unless --overwrite is given")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the results already in --out")
    parser.add_argument("--jobs", type=int, metavar="J", default=available_cores(),
                        help="processes playing games (default: all available cores, "
                        f"here {available_cores()})")
    parser.add_argument("--device", default="cpu", metavar="DEVICE",
                        help="where the agents that run a network run it: auto, cpu, cuda, "
                        "cuda:N or mps (default: cpu); an agent's own @DEVICE wins")
    args = parser.parse_args(argv)
    if not 2 <= args.games <= MAX_GAMES or args.games % 2:
        fail(f"--games must be a positive even number (games are paired) of at most "
             f"{MAX_GAMES:,}, got {args.games}")
    if args.jobs < 1:
        fail(f"--jobs must be at least 1, got {args.jobs}")
    if args.seed < 0:
        fail(f"--seed must be non-negative, got {args.seed}")
    check_game_rules(args.game, args.rules)
    check_device(args.device)
    args.agents = args.agents or (default_agents() if args.game == "patchwork"
                                  else list(DEFAULT_DRAFT_AGENTS))
    if len(args.agents) < 2:
        fail("a tournament needs at least two agents")
    if len(set(args.agents)) < len(args.agents):
        fail(f"each agent may appear once, got {' '.join(args.agents)}")
    for spec in args.agents:  # a bad spec stops here too
        if build_agent(spec, args.seed, args.device, args.game).spec == "human":
            fail("human cannot play in a tournament: use patchwork-play")
    if args.out is None and args.overwrite:
        fail("--overwrite replaces the results in --out DIR: give --out too")
    return args


@ends_quietly_when_stdout_closes
@stops_on_sigterm_as_on_ctrl_c
def main(argv: Sequence[str] | None = None) -> int:
    """Run the tournament the command line asks for; the exit status."""
    args = parse_args(argv)
    started = time.time()
    try:
        held = (claim_new_results_folder(started) if args.out is None
                else claim_out(args.out, args.overwrite))
    except FolderError as e:
        fail(f"output folder: {e}")
    with held as out:
        return tournament(args, out)


def tournament(args: argparse.Namespace, out: Path) -> int:
    """Play the tournament ``args`` asks for and write its results in ``out``; the exit
    status."""
    from tqdm import tqdm

    specs = args.agents
    n_pairings = len(specs) * (len(specs) - 1) // 2
    game = "" if args.game == "patchwork" else f"{GAME_NAMES[args.game]}: "
    print(f"{game}{len(specs)} agents, {n_pairings} pairings x {args.games} games, "
          f"rules {args.rules}, seed {args.seed}, up to {args.jobs} process(es)", flush=True)
    start = time.perf_counter()
    try:
        with tqdm(total=n_pairings * args.games, unit="game", file=sys.stderr) as bar:
            pairings, records = round_robin(specs, args.games, args.seed, args.rules,
                                            args.jobs, lambda task, recs: bar.update(len(recs)),
                                            device=args.device, game=args.game)
    except KeyboardInterrupt:
        print("evaluate.py: interrupted: no results written", file=sys.stderr)
        return INTERRUPTED_STATUS
    runtime = time.perf_counter() - start
    anchor = "random" if "random" in specs else specs[0]
    elo = elo_table(specs, pairings, anchor, seed=args.seed)
    settings = {"game": args.game, "games": args.games, "seed": args.seed, "rules": args.rules,
                "jobs": args.jobs, "device": args.device, "anchor": anchor,
                "runtime_s": round(runtime, 1)}
    try:
        with together():  # all four files, or none of them
            write_json(out / "results.json", specs, pairings, elo, settings)
            write_csv(out / "results.csv", pairings, records)
            game = "" if args.game == "patchwork" else f"{GAME_NAMES[args.game]}: "
            plot_elo(out / "elo.png", elo, anchor,
                     f"{game}Elo, {args.games} games per pairing (rules: {args.rules})")
            ranked = sorted(specs, key=lambda s: -elo[s]["rating"])
            plot_scores(out / "scores.png", ranked, pairings, records)
    except WriteError as e:
        print(f"evaluate.py: error: {e}: no results written", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("evaluate.py: interrupted: no results written", file=sys.stderr)
        return INTERRUPTED_STATUS
    print()
    print(pairings_table(pairings))
    print()
    print(ranking_table(elo, anchor))
    print(f"\n{n_pairings * args.games} games in {runtime:.0f} s")
    print(f"results written to {out}{os.sep} ({', '.join(OUTPUTS)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
