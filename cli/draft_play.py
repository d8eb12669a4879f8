"""Play Patchwork Draft in the terminal against an agent: ``patchwork-play --game draft``.

The screen is :class:`~patchwork_env.views.draft_game.DraftGame`'s text view (both quilts
with the star squares, buttons, points and scores, the face-up row, the deck's size); a
move is typed in the draft's notation (``buy slot 1 o3 at c4``, ``discard slot 2``) or as
an action id, ``moves`` lists the legal moves and ``quit`` leaves. A move the rules forbid
is refused with the rule it breaks, as on the page.
"""

from __future__ import annotations

import sys
from typing import TextIO

from patchwork_env.agents.base import Agent
from patchwork_env.agents.human import QuitGame
from patchwork_env.data.draft_actions import format_draft_action, parse_draft_action
from patchwork_env.views.draft_game import DraftGame
from patchwork_env.web.draft_state import describe, why_illegal

HELP = ("type a move: 'buy slot S oO at CELL' (a face-up patch, its orientation 0-7 and its "
        "top-left cell), 'discard slot S' (only when nothing can be bought), or an action "
        "id; 'moves' lists the legal moves, 'quit' leaves")


def list_moves(actions: list[int]) -> str:
    """Moves in the notation, the cells of one patch in one orientation written together:
    ``buy slot 2 o5 at f8 f7 f6; discard slot 0``."""
    groups: dict[str, list[str]] = {}
    for a in actions:
        head, at, cell = format_draft_action(a).rpartition(" at ")
        groups.setdefault(f"{head} at" if at else cell, []).append(cell if at else "")
    return "; ".join(" ".join([head, *cells]).strip() for head, cells in groups.items())


def ask(game: DraftGame, stdin: TextIO, stdout: TextIO) -> int:
    """Show ``game`` and read lines until one is a legal move; that move. Raises
    :class:`QuitGame` on ``quit`` and ``EOFError`` when the input ends."""
    print(f"{game}\nplayer {game.to_move}, your move ('help' for the notation):", file=stdout)
    legal = set(game.legal_actions().tolist())
    while True:
        stdout.write("> ")
        stdout.flush()
        line = stdin.readline()
        if not line:
            raise EOFError("the input ended before a move was given")
        text = line.strip().lower()
        if text == "quit":
            raise QuitGame
        if text == "moves":
            print(list_moves(sorted(legal)), file=stdout)
            continue
        if text in ("help", ""):
            print(HELP, file=stdout)
            continue
        try:
            action = parse_draft_action(text)
        except ValueError as e:
            print(e, file=stdout)
            continue
        if action in legal:
            return action
        print(why_illegal(game, action), file=stdout)


def play_draft(opponent: Agent, seat: int, game: DraftGame, stdin: TextIO | None = None,
               stdout: TextIO | None = None) -> DraftGame:
    """Play ``game`` to its end, the person (on ``stdin``/``stdout``) holding ``seat``;
    each of the opponent's moves is announced."""
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    print(f"You are player {seat}; player {1 - seat} is {opponent.spec}. Type 'help' for "
          "the notation.", file=stdout)
    while not game.is_over:
        if game.to_move == seat:
            action = ask(game, stdin, stdout)
        else:
            action = opponent.act_game(game)
            print(f"player {game.to_move} ({opponent.spec}) plays {describe(game, action)}",
                  file=stdout)
        game.step(action)
    return game
