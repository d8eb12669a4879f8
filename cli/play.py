"""Play Patchwork in the terminal (or, with ``--web``, in a browser) against an agent.

    patchwork-play [--game patchwork|draft] [--opponent SPEC] [--seat 0|1] [--seed S]
                   [--rules PRESET] [--layout auto|compact|full] [--no-color]
    patchwork-play --web [--game patchwork|draft] [--opponent SPEC] [--port P] [--host H]
                   [--no-browser]
    python -m patchwork_env.cli.play --opponent mcts:1s --seat 1

The opponent is any spec of the agents registry (``random``, ``greedy``, ``mcts:1s``,
``ppo``, even ``human`` for two people at one keyboard). The screen fits a standard 80x24
terminal (a larger one shows the full picture); at the prompt ``help`` explains the move
notation, ``moves`` lists the legal moves and ``full`` draws the full picture.

``--game draft`` plays Patchwork Draft, the drafting variant (section 13 of the rules),
against ``random``, ``greedy`` or ``mcts``: in the terminal on its text view
(:mod:`patchwork_env.cli.draft_play`), or on the page with ``--web``; ``--rules`` then
takes the draft's presets (``default``, ``no-stars``).

``--web`` serves a page on 127.0.0.1 (unless ``--host`` says otherwise) where the game is
played with the mouse, prints its address and opens it in a browser unless
``--no-browser``; ``--seat``, ``--seed`` and ``--rules`` set its first game. It needs the
``web`` extra (``pip install -e ".[web]"``).

A game whose screen goes away (standard output closed by its reader) ends quietly with exit
status 141, as a program stopped by ``SIGPIPE``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from patchwork_env.agents import GAMES
from patchwork_env.agents.base import Agent
from patchwork_env.agents.human import HumanAgent, QuitGame, describe_move
from patchwork_env.cli.common import ArgumentParser, build_agent, check_rules, fail
from patchwork_env.data.draft_rules import DRAFT_PRESETS
from patchwork_env.files.stdout import ends_quietly_when_stdout_closes
from patchwork_env.views.draft_game import DraftGame
from patchwork_env.views.game import Game

PROG = "patchwork-play"


def seed_arg(text: str) -> int:
    """A seed: a non-negative integer (``argparse`` type)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return value


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The parsed command line; bad values end the program with one line and status 2."""
    parser = ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    parser.add_argument("--game", choices=GAMES, default="patchwork",
                        help="patchwork (default) or draft: Patchwork Draft, the drafting "
                             "variant")
    parser.add_argument("--opponent", default="greedy",
                        help="agent spec of the opponent (default: greedy)")
    parser.add_argument("--seat", type=int, choices=(0, 1), default=0,
                        help="your seat: 0 or 1 (default 0; who starts is drawn from the seed)")
    parser.add_argument("--seed", type=seed_arg, default=None,
                        help="seed of the circle, the first player and the opponent")
    parser.add_argument("--rules", default="default", help="rules preset (default: default)")
    parser.add_argument("--layout", choices=("auto", "compact", "full"), default="auto",
                        help="auto (default): the full picture if the terminal has room for "
                             "it, else the compact 80x24 screen")
    parser.add_argument("--no-color", action="store_true", help="plain text, no ANSI colours")
    web = parser.add_argument_group("in a browser")
    web.add_argument("--web", action="store_true",
                     help="play in a browser: serve the page and print its address")
    web.add_argument("--port", type=port_arg, default=8000, help="port of the page (default 8000)")
    web.add_argument("--host", default="127.0.0.1",
                     help="address to serve on (default 127.0.0.1: this machine only)")
    web.add_argument("--no-browser", action="store_true",
                     help="print the address without opening a browser")
    return parser.parse_args(argv)


def port_arg(text: str) -> int:
    """A TCP port, 1..65535 (``argparse`` type)."""
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port in 1..65535, got {text!r}")
    return int(text)


def play_in_browser(args: argparse.Namespace) -> int:
    """Serve the page until interrupted (:func:`patchwork_env.web.server.serve`)."""
    from patchwork_env.web.server import MissingExtra, require_web_extra, serve

    try:
        require_web_extra()
    except MissingExtra as e:
        fail(str(e))
    if args.opponent.strip().partition(":")[0] == "human":
        fail("--web plays against an agent: 'human' is for two people at one terminal")
    build_agent(args.opponent, args.seed, game=args.game)  # a bad spec: one line, not served
    try:
        serve(args.host, args.port, open_browser=not args.no_browser, opponent=args.opponent,
              seed=args.seed, seat=args.seat, rules=args.rules, game=args.game)
    except OSError as e:
        fail(str(e))
    except KeyboardInterrupt:
        pass
    return 0


def check_game_rules(args: argparse.Namespace) -> str:
    """``--rules`` if it is a preset of ``--game``, else a one-line exit."""
    if args.game == "patchwork":
        return check_rules(args.rules)
    if args.rules not in DRAFT_PRESETS:
        fail(f"unknown rules preset {args.rules!r} for Patchwork Draft: choose from "
             f"{', '.join(DRAFT_PRESETS)}")
    return args.rules


def play_draft_in_terminal(args: argparse.Namespace, rules: str) -> int:
    """A game of Patchwork Draft at the terminal (:mod:`patchwork_env.cli.draft_play`)."""
    from patchwork_env.cli.draft_play import play_draft

    opponent = build_agent(args.opponent, args.seed, game=args.game)
    try:
        game = play_draft(opponent, args.seat, DraftGame.new(args.seed, rules=rules))
    except QuitGame:
        print("game abandoned")
        return 0
    except (EOFError, KeyboardInterrupt):
        print("\ninput ended: game abandoned")
        return 1
    scores = game.scores()
    verdict = "you win" if game.winner == args.seat else f"{opponent.spec} wins"
    tie = " (a tie goes to the player who moved second)" if scores[0] == scores[1] else ""
    print(f"{game}\nfinal score: you {scores[args.seat]}, {opponent.spec} "
          f"{scores[1 - args.seat]}: {verdict}{tie}")
    return 0


def play(human: HumanAgent, opponent: Agent, seat: int, game: Game) -> Game:
    """Play ``game`` to its end, ``human`` holding ``seat``; the opponent's moves are shown
    to ``human`` above the next screen."""
    while not game.is_over:
        mover = human if game.to_move == seat else opponent
        action = mover.act_game(game)
        if mover is opponent:
            human.note(f"player {game.to_move} ({opponent.spec}) plays "
                       f"{describe_move(game, action)}")
        game.step(action)
    return game


@ends_quietly_when_stdout_closes
def main(argv: Sequence[str] | None = None) -> int:
    """Run a game from the command line; the exit status."""
    args = parse_args(argv)
    rules = check_game_rules(args)
    if args.web:
        return play_in_browser(args)
    if args.game == "draft":
        if args.opponent.strip().partition(":")[0] == "human":
            fail("--game draft plays against an agent: random, greedy or mcts")
        return play_draft_in_terminal(args, rules)
    opponent = build_agent(args.opponent, args.seed)
    human = HumanAgent(color=False if args.no_color else None, layout=args.layout)
    game = Game.new(args.seed, rules=rules)
    human.note(f"You are player {args.seat}; player {1 - args.seat} is {opponent.spec}. "
               "Type 'help' for the notation.")
    try:
        play(human, opponent, args.seat, game)
    except QuitGame:
        human.say("game abandoned")
        return 0
    except (EOFError, KeyboardInterrupt):
        human.say("\ninput ended: game abandoned")
        return 1
    human.say(human.screen(game, extra_lines=1))
    scores = game.scores()
    verdict = "you win" if game.winner == args.seat else f"{opponent.spec} wins"
    human.say(f"final score: you {scores[args.seat]}, {opponent.spec} {scores[1 - args.seat]}: "
              f"{verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
