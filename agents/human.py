"""A person at the terminal: sees the position, types moves in the readable notation.

Commands at the prompt:

* a move: ``advance``, ``buy slot 1 o3 at c4``, ``leather at e5`` (or a bare action id);
* ``moves``: the legal moves, buys grouped by slot and orientation;
* ``shapes SLOT``: the orientations of the patch in that slot, drawn with their numbers;
* ``board``: the position again; ``help``: this list; ``quit``: leave the game.

A line that is not a legal move is explained and asked again; nothing is played until a
legal move is typed.
"""

from __future__ import annotations

import sys
import textwrap
from collections import defaultdict
from typing import TextIO

import numpy as np

from patchwork_env import Game, GameBatch, format_action, parse_action
from patchwork_env.actions import ADVANCE, LEATHER_BASE, N_CELLS, SLOT_STRIDE, cell_name
from patchwork_env.patches import PATCHES
from patchwork_env.render import render_text

from .base import Agent, check_rows

HELP = """\
type a move:  advance | buy slot S oO at CELL | leather at CELL   (e.g. buy slot 1 o3 at c4)
  CELL is a column letter and a row number (a1 = top left); the patch's top-left corner,
  of its bounding box in that orientation, goes on CELL
other commands:  moves (list legal moves) | shapes S (orientations of slot S) |
  board (show the position) | help | quit"""
_WIDTH = 96


class QuitGame(Exception):
    """The person asked to leave the game."""


class HumanAgent(Agent):
    """Asks a person for each move on ``stdin``/``stdout`` (or the given streams)."""

    spec = "human"

    def __init__(self, seed: int | None = None, stdin: TextIO | None = None,
                 stdout: TextIO | None = None, color: bool | None = None) -> None:
        super().__init__(seed)
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.color = self.stdout.isatty() if color is None else color

    def act(self, batch: GameBatch, rows: np.ndarray) -> np.ndarray:
        rows = check_rows(batch, rows)
        return np.array([self.ask(batch.game(int(r))) for r in rows], np.int64)

    def say(self, text: str = "") -> None:
        """Print a line for the person."""
        print(text, file=self.stdout, flush=True)

    def ask(self, game: Game) -> int:
        """Show ``game`` and read lines until one is a legal move; that move.

        Raises :class:`QuitGame` on ``quit`` and ``EOFError`` when the input ends.
        """
        self.say(render_text(game, color=self.color))
        self.say(f"player {game.to_move}, your move ('help' for the notation):")
        while True:
            self.stdout.write("> ")
            self.stdout.flush()
            line = self.stdin.readline()
            if not line:
                raise EOFError("the input ended before a move was given")
            reply = self._answer(game, line.strip())
            if isinstance(reply, int):
                return reply
            self.say(reply)

    def _answer(self, game: Game, line: str) -> int | str:
        """The legal move ``line`` names, or the text to show instead."""
        word, _, rest = line.lower().partition(" ")
        if not line:
            return "type a move, or 'help'"
        if word in ("quit", "exit"):
            raise QuitGame
        if word in ("help", "?"):
            return HELP
        if word == "board":
            return render_text(game, color=self.color)
        if word == "moves":
            return legal_moves_text(game)
        if word == "shapes":
            return self._shapes(game, rest)
        try:
            action = parse_action(line)
        except ValueError as e:
            return f"{e}; try again ('moves' lists the legal moves)"
        trial = game.copy()
        try:
            trial.step(action)
        except ValueError as e:
            return f"not a legal move: {e}; try again ('moves' lists the legal moves)"
        return action

    def _shapes(self, game: Game, arg: str) -> str:
        n = min(3, len(game.circle))
        if not arg.strip().isdigit() or int(arg) >= n:
            return f"usage: shapes S, with S a slot in 0..{n - 1}" if n else "the circle is empty"
        return orientations_text(PATCHES[game.circle[int(arg)]].id)


def legal_moves_text(game: Game) -> str:
    """The legal moves of ``game``, compactly: buys grouped by slot and orientation."""
    actions = game.legal_actions()
    if game.pending_leather:
        cells = " ".join(cell_name(int(a) - LEATHER_BASE) for a in actions)
        return f"leather at: {cells}"
    lines = ["advance"] if ADVANCE in actions else []
    groups: dict[tuple[int, int], list[str]] = defaultdict(list)
    for a in actions[actions < ADVANCE]:
        slot, code = divmod(int(a), SLOT_STRIDE)
        orientation, anchor = divmod(code, N_CELLS)
        groups[slot, orientation].append(cell_name(anchor))
    for (slot, orientation), anchors in sorted(groups.items()):
        head = f"buy slot {slot} (patch {game.circle[slot]}) o{orientation} at: "
        lines += textwrap.wrap(" ".join(anchors), _WIDTH, initial_indent=head,
                               subsequent_indent=" " * len(head))
    if len(lines) == 1:
        lines.append("(no patch is affordable and fits)")
    return "\n".join(lines)


def orientations_text(patch_id: int) -> str:
    """The distinct orientations of a patch side by side, each under its ``oN`` label."""
    patch = PATCHES[patch_id]
    blocks = []
    for o in patch.canonical_orientations:
        cells = set(patch.oriented(o))
        height = max(r for r, _ in cells) + 1
        width = max(c for _, c in cells) + 1
        rows = ["".join("X" if (r, c) in cells else "." for c in range(width))
                for r in range(height)]
        blocks.append([f"o{o}", *rows])
    width = max(len(line) for b in blocks for line in b) + 3
    depth = max(len(b) for b in blocks)
    lines = [f"patch {patch_id} (the top-left corner of each picture goes on the cell):"]
    for i in range(depth):
        lines.append("".join((b[i] if i < len(b) else "").ljust(width) for b in blocks).rstrip())
    return "\n".join(lines)


def describe_move(game: Game, action: int) -> str:
    """``format_action`` plus the patch a buy takes, for announcing a move in ``game``."""
    text = format_action(action)
    if action < ADVANCE:
        patch = PATCHES[game.circle[action // SLOT_STRIDE]]
        text += f" (patch {patch.id}: cost {patch.cost}, time {patch.time}, income {patch.income})"
    return text
