"""A person at the terminal: sees the position, types moves in the readable notation.

Commands at the prompt:

* a move: ``advance``, ``buy slot 1 o3 at c4``, ``leather at e5`` (or a bare action id);
* ``moves``: the legal moves, buys grouped by slot and orientation;
* ``shapes SLOT``: the orientations of the patch in that slot, drawn with their numbers;
* ``board``: the screen again; ``full``: the full picture of the position;
* ``help``: this list; ``quit``: leave the game.

The position is drawn so that it and the prompt fit the terminal: on a standard 80x24
terminal as the compact screen of :func:`patchwork_env.views.render.render_text`, on a large one
as the full picture. A line that is not a legal move is explained (which rule it breaks,
and the nearest legal moves) and asked again; nothing is played until a legal move is typed.
"""

from __future__ import annotations

import shutil
import sys
import textwrap
from collections import defaultdict
from typing import TextIO

import numpy as np

from patchwork_env import Game, GameBatch, format_action, parse_action
from patchwork_env.agents.base import Agent, check_rows
from patchwork_env.data.actions import (
    ADVANCE,
    LEATHER_BASE,
    N_CELLS,
    N_SLOTS,
    SLOT_STRIDE,
    Buy,
    Leather,
    cell_name,
    decode_action,
)
from patchwork_env.data.patches import PATCHES
from patchwork_env.data.rules import BOARD_SIZE
from patchwork_env.views.render import COMPACT_WIDTH, LAYOUTS, render_text

HELP = """\
moves:  advance | buy slot S oO at CELL | leather at CELL
  S: a slot, 0..2 (0 is next to the neutral token); oO: an orientation, o0..o7
  ('shapes S' draws those of slot S); CELL: a column letter and a row number
  (a1 is the top left), where the patch's top-left corner (of its bounding box)
  goes; e.g. buy slot 1 o3 at c4, leather at e5
commands:  moves (the legal moves) | shapes S | board (the screen again) |
  full (the full picture) | help | quit"""
PROMPT_LINES = 2
"""Lines the prompt takes below the screen: the question and the ``> `` input line."""
NOTE_LINES = 3
"""At most this many notes (the opponent's last moves) are shown above the screen."""
_SCREEN = (COMPACT_WIDTH, 24)  # the terminal assumed when the output is not one
_MAX_WIDTH = 100
_ALTERNATIVES = 3


class QuitGame(Exception):
    """The person asked to leave the game."""


class HumanAgent(Agent):
    """Asks a person for each move on ``stdin``/``stdout`` (or the given streams).

    ``layout``: ``"auto"`` (the full picture if the terminal has room for it, else the
    compact screen), ``"compact"`` or ``"full"``. ``color``: ANSI colours; by default when
    the output is a terminal.
    """

    spec = "human"

    def __init__(self, seed: int | None = None, stdin: TextIO | None = None,
                 stdout: TextIO | None = None, color: bool | None = None,
                 layout: str = "auto") -> None:
        super().__init__(seed)
        if layout not in ("auto", *LAYOUTS):
            raise ValueError(f"layout must be 'auto' or one of {list(LAYOUTS)}, got {layout!r}")
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.color = self.stdout.isatty() if color is None else color
        self.layout = layout
        self.notes: list[str] = []

    def act(self, batch: GameBatch, rows: np.ndarray) -> np.ndarray:
        rows = check_rows(batch, rows)
        return np.array([self.ask(Game.from_batch(batch, int(r))) for r in rows], np.int64)

    def say(self, text: str = "") -> None:
        """Print a line for the person."""
        print(text, file=self.stdout, flush=True)

    def note(self, text: str) -> None:
        """Keep a line (e.g. the opponent's move) to show above the next screen."""
        self.notes.append(text)

    def terminal_size(self) -> tuple[int, int]:
        """``(columns, lines)`` of the terminal, or 80x24 when the output is not one."""
        if self.stdout.isatty():
            size = shutil.get_terminal_size(_SCREEN)
            return size.columns, size.lines
        return _SCREEN

    def screen(self, game: Game, extra_lines: int = PROMPT_LINES) -> str:
        """The notes kept since the last screen and the position, sized for the terminal
        so that ``extra_lines`` more lines (the prompt) still fit; the notes are cleared."""
        columns, lines = self.terminal_size()
        width = min(columns, _MAX_WIDTH)
        notes = [_clip_line(n, width) for n in self.notes[-NOTE_LINES:]]
        self.notes.clear()
        layout = self.layout
        if layout == "auto":
            full = render_text(game, color=False).splitlines()
            fits = (max(len(line) for line in full) <= columns
                    and len(notes) + len(full) + extra_lines <= lines)
            layout = "full" if fits else "compact"
        return "\n".join([*notes, render_text(game, self.color, layout=layout, width=width)])

    def ask(self, game: Game) -> int:
        """Show ``game`` and read lines until one is a legal move; that move.

        Raises :class:`QuitGame` on ``quit`` and ``EOFError`` when the input ends.
        """
        self.say(self.screen(game))
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
        width = min(self.terminal_size()[0], _MAX_WIDTH)
        if not line:
            return "type a move, or 'help'"
        if word in ("quit", "exit"):
            raise QuitGame
        if word in ("help", "?"):
            return HELP
        if word == "board":
            return self.screen(game)
        if word == "full":
            return render_text(game, color=self.color)
        if word == "moves":
            return legal_moves_text(game, width)
        if word == "shapes":
            return self._shapes(game, rest)
        try:
            action = parse_action(line)
        except ValueError as e:
            return _wrap(f"{e}; try again ('moves' lists the legal moves)", width)
        if action not in game.legal_actions():
            return explain_illegal(game, action, width)
        return action

    def _shapes(self, game: Game, arg: str) -> str:
        n = min(N_SLOTS, len(game.circle))
        if not arg.strip().isdigit() or int(arg) >= n:
            return f"usage: shapes S, with S a slot in 0..{n - 1}" if n else "the circle is empty"
        return orientations_text(PATCHES[game.circle[int(arg)]].id)


def legal_moves_text(game: Game, width: int = COMPACT_WIDTH) -> str:
    """The legal moves of ``game``, compactly: buys grouped by slot and orientation."""
    actions = game.legal_actions()
    if game.pending_leather:
        cells = " ".join(cell_name(int(a) - LEATHER_BASE) for a in actions)
        return textwrap.fill(cells, width, initial_indent="leather at: ",
                             subsequent_indent=" " * 12)
    lines = ["advance"] if ADVANCE in actions else []
    groups: dict[tuple[int, int], list[str]] = defaultdict(list)
    for a in actions[actions < ADVANCE]:
        slot, code = divmod(int(a), SLOT_STRIDE)
        orientation, anchor = divmod(code, N_CELLS)
        groups[slot, orientation].append(cell_name(anchor))
    for (slot, orientation), anchors in sorted(groups.items()):
        head = f"buy slot {slot} (patch {game.circle[slot]}) o{orientation} at: "
        lines += textwrap.wrap(" ".join(anchors), width, initial_indent=head,
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


# ----- why a move is not legal -----------------------------------------------------------------

def explain_illegal(game: Game, action: int, width: int = COMPACT_WIDTH) -> str:
    """Why ``action`` is not a legal move in ``game``: the rule it breaks, in the move
    notation, then the nearest legal moves. Worked out from the position alone."""
    why, instead = _why_illegal(game, action)
    lines = [f"not a legal move: {format_action(action)}: {why}"]
    if instead:
        lines.append(instead)
    return "\n".join(_wrap(line, width, indent=bool(i)) for i, line in enumerate(lines))


def _why_illegal(game: Game, action: int) -> tuple[str, str]:
    """The rule ``action`` breaks and what the player could play instead."""
    if game.is_over:
        return "the game is over", ""
    move = decode_action(action)
    empty = sorted(set(range(N_CELLS)) - set(game.quilt_cells(game.to_move)))
    if game.pending_leather and not isinstance(move, Leather):
        return ("first place the leather patch you won on the time track, on an empty cell "
                "of your quilt", f"e.g. {_moves(_nearest_leather(empty, N_CELLS // 2))}")
    if isinstance(move, Leather):
        if not game.pending_leather:
            return ("no leather patch is pending (one is won by being first to reach a leather "
                    "space of the time track)", f"you can {_options(game)}")
        return (f"{cell_name(move.cell)} is already covered on your quilt",
                f"the nearest empty cells: {_moves(_nearest_leather(empty, move.cell))}")
    if isinstance(move, Buy):
        return _why_buy(game, move)
    return "it is not among the legal moves", "'moves' lists them"


def _why_buy(game: Game, move: Buy) -> tuple[str, str]:
    circle = game.circle
    n = min(N_SLOTS, len(circle))
    if move.slot >= n:
        left = ("the circle is empty" if n == 0 else
                f"only {n} patches are left to buy (slots 0..{n - 1})" if n > 1 else
                "only 1 patch is left to buy (slot 0)")
        return f"slot {move.slot} is empty: {left}", f"you can {_options(game)}"
    player = game.to_move
    patch = PATCHES[circle[move.slot]]
    buttons = game.buttons[player]
    if patch.cost > buttons:
        return (f"you have {_count(buttons, 'button')}, patch {patch.id} costs {patch.cost}",
                f"you can {_options(game)}")
    reasons = []
    canonical = patch.canonical(move.orientation)
    if canonical != move.orientation:
        reasons.append(f"patch {patch.id} has the same shape in o{move.orientation} as in "
                       f"o{canonical}, and a move names a shape by its lowest number")
    shape = patch.oriented(move.orientation)
    height = max(r for r, _ in shape) + 1
    wide = max(c for _, c in shape) + 1
    row, col = divmod(move.anchor, BOARD_SIZE)
    edges = [edge for edge, out in (("bottom", row + height > BOARD_SIZE),
                                    ("right", col + wide > BOARD_SIZE)) if out]
    if edges:
        last = cell_name((BOARD_SIZE - height) * BOARD_SIZE + BOARD_SIZE - wide)
        size = f"{_count(height, 'row')} by {_count(wide, 'column')}"
        reasons.append(f"patch {patch.id} would leave the board at the {' and '.join(edges)} "
                       f"edge{'s' if len(edges) > 1 else ''} (in o{move.orientation} it is "
                       f"{size}: its corner goes on a1 .. {last})")
    covered = set(game.quilt_cells(player))
    overlap = [(row + r) * BOARD_SIZE + col + c for r, c in shape
               if row + r < BOARD_SIZE and col + c < BOARD_SIZE]
    overlap = sorted(set(overlap) & covered)
    if overlap:
        reasons.append(f"it overlaps your quilt at {', '.join(map(cell_name, overlap))}")
    if not reasons:
        return "it is not among the legal moves", "'moves' lists them"
    why = "; ".join(reasons)
    same_slot = [a for a in game.legal_actions().tolist()
                 if a < ADVANCE and a // SLOT_STRIDE == move.slot]
    if not same_slot:
        return why, f"patch {patch.id} fits nowhere on your quilt; you can {_options(game)}"
    same_shape = [a for a in same_slot if (a % SLOT_STRIDE) // N_CELLS == canonical]
    near = _nearest(same_shape or same_slot, move.anchor)
    return why, f"nearest legal moves: {_moves(near)}"


def _distance(a: int, b: int) -> int:
    (ra, ca), (rb, cb) = divmod(a, BOARD_SIZE), divmod(b, BOARD_SIZE)
    return (ra - rb) ** 2 + (ca - cb) ** 2


def _nearest(buys: list[int], anchor: int) -> list[int]:
    """Up to three buy actions whose anchors are closest to ``anchor``."""
    return sorted(buys, key=lambda a: (_distance(a % N_CELLS, anchor), a))[:_ALTERNATIVES]


def _nearest_leather(empty: list[int], cell: int) -> list[int]:
    """Up to three leather actions on the empty cells closest to ``cell``."""
    near = sorted(empty, key=lambda c: (_distance(c, cell), c))[:_ALTERNATIVES]
    return [LEATHER_BASE + c for c in near]


def _options(game: Game) -> str:
    """What the player to move can do instead: the buyable slots and advancing."""
    actions = game.legal_actions().tolist()
    slots = sorted({a // SLOT_STRIDE for a in actions if a < ADVANCE})
    options = [f"buy slot {s} (patch {game.circle[s]}, cost {PATCHES[game.circle[s]].cost})"
               for s in slots]
    if ADVANCE in actions:
        options.append(f"advance (+{_count(game.advance_buttons(), 'button')})")
    return _either(options) if options else _moves(actions)


def _moves(actions: list[int]) -> str:
    """Moves in the notation, those that differ only in the cell written once:
    ``buy slot 2 o5 at f8, f7 or f6``."""
    groups: dict[str, list[str]] = {}
    for a in actions:
        head, _, cell = format_action(a).rpartition(" at ")
        groups.setdefault(head, []).append(cell)
    return _either([f"{head} at {_either(cells)}" if head else _either(cells)
                    for head, cells in groups.items()])


def _either(items: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return " or ".join([", ".join(items[:-1]), items[-1]]) if len(items) > 1 else "".join(items)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _wrap(text: str, width: int, indent: bool = False) -> str:
    """``text`` in lines of at most ``width`` columns, continuation lines indented."""
    return textwrap.fill(text, max(40, width), initial_indent="  " if indent else "",
                         subsequent_indent="  ", break_long_words=False,
                         break_on_hyphens=False)


def _clip_line(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."
