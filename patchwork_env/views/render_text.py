"""Text pictures of a position for a terminal, in two layouts.

* ``"full"`` (the default of :func:`render_text`, and ``str(game)``): both quilts side by
  side, the time track with a ruler, each player's figures and the buyable patches drawn
  large; some 37 lines by up to 96 columns.
* ``"compact"``: one screen of a standard 80x24 terminal with room for a prompt: both
  quilts, the three buyable patches and the next ones of the circle beside them, the time
  track on one line. At most :data:`COMPACT_LINES` lines of at most ``width`` columns
  (``width`` >= 80; below that the circle goes under the quilts).

Each patch has its own letter (``A`` for patch 0 up to ``Z`` for patch 25 and ``a`` .. ``g``
for patches 26 .. 32), ``*`` is a leather patch, ``.`` an empty cell and ``#`` a covered
cell whose patch the state does not record. Cells are named as in
:mod:`patchwork_env.data.actions`: column letter, then row number, ``a1`` at the top left.
Colours are xterm 256-colour codes; the helpers here measure and pad lines by the columns
they take on screen, colour codes taking none.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from patchwork_env.data.actions import N_SLOTS
from patchwork_env.data.patches import PATCHES, Patch
from patchwork_env.data.rules import BOARD_SIZE
from patchwork_env.views.render_common import (
    EMPTY,
    LEATHER_COLOR,
    LEATHER_SYMBOL,
    PLAYER_COLORS,
    RGB,
    UNKNOWN,
    bonus_holder,
    figures,
    leather_on_track,
    patch_color,
    patch_symbol,
    quilt_ids,
    status_text,
)

if TYPE_CHECKING:
    from patchwork_env.views.game import Game

LAYOUTS = ("full", "compact")
"""The layouts :func:`render_text` draws."""
COMPACT_WIDTH = 80
"""The width the compact layout is made for: the side panel needs this many columns."""
COMPACT_LINES = 16
"""The compact layout's height with the default rules (a longer track takes more lines)."""

_TRACK_CHUNK = 80
_TEXT_PANEL = 38
_TEXT_SLOT = 30
_TEXT_WIDTH = 96
_QUILT_COLUMN = 22  # a compact quilt (20 columns) and the gap after it
_SLOT_COLUMN = 12
_COLUMNS = string.ascii_lowercase[:BOARD_SIZE]


def render_text(game: Game, color: bool = True, *, layout: str = "full",
                width: int = COMPACT_WIDTH) -> str:
    """A text picture of the position; ANSI colours only when ``color`` is true.

    ``layout`` is ``"full"`` (the big picture) or ``"compact"`` (one screen of ``width``
    columns, see the module docstring); ``width`` matters only to the compact layout.
    """
    if layout == "full":
        return full_text(game, color)
    if layout == "compact":
        return compact_text(game, color, width)
    raise ValueError(f"layout must be one of {list(LAYOUTS)}, got {layout!r}")


# ----- terminal primitives: colour codes, measuring and padding coloured lines ----------------

RESET = "\x1b[0m"
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
"""An ANSI colour code (select graphic rendition)."""
_CUBE = (0, 95, 135, 175, 215, 255)


def _cube_level(value: int) -> int:
    return min(range(len(_CUBE)), key=lambda i: abs(_CUBE[i] - value))


@cache
def xterm256(rgb: RGB) -> int:
    """The nearest colour of the xterm 256-colour palette (6x6x6 cube or grey ramp)."""
    levels = [_cube_level(v) for v in rgb]
    cube = tuple(_CUBE[i] for i in levels)
    grey_level = min(23, max(0, round((sum(rgb) / 3 - 8) / 10)))
    grey = (8 + 10 * grey_level,) * 3

    def dist(c: Sequence[int]) -> int:
        return sum((a - b) ** 2 for a, b in zip(c, rgb, strict=True))

    if dist(grey) < dist(cube):
        return 232 + grey_level
    return 16 + 36 * levels[0] + 6 * levels[1] + levels[2]


def _is_light(rgb: RGB) -> bool:
    return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] > 140


def paint(text: str, rgb: RGB, color: bool, background: bool = False) -> str:
    """``text`` in colour ``rgb`` (as foreground, or as background with a readable ink)."""
    if not color:
        return text
    if background:
        ink = 16 if _is_light(rgb) else 231
        return f"\x1b[48;5;{xterm256(rgb)};38;5;{ink}m{text}{RESET}"
    return f"\x1b[1;38;5;{xterm256(rgb)}m{text}{RESET}"


def visible_len(text: str) -> int:
    """The number of columns ``text`` takes on a terminal (colour codes take none)."""
    return len(ANSI_RE.sub("", text))


def pad(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` visible columns."""
    return text + " " * max(0, width - visible_len(text))


def clip(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` visible columns, its colour codes kept and closed."""
    if visible_len(text) <= width:
        return text
    out, seen, pos, painted = [], 0, 0, False
    for m in ANSI_RE.finditer(text):
        plain = text[pos:m.start()]
        take = plain[: max(0, width - seen)]
        out.append(take)
        seen += len(take)
        if seen >= width:
            break
        out.append(m.group())
        painted = m.group() != RESET
        pos = m.end()
    else:
        out.append(text[pos:][: max(0, width - seen)])
    return "".join(out) + (RESET if painted else "")


def side_by_side(blocks: Sequence[Sequence[str]], width: int | Sequence[int]) -> list[str]:
    """Blocks of lines next to each other, each padded to its ``width`` visible columns."""
    widths = [width] * len(blocks) if isinstance(width, int) else list(width)
    height = max(len(b) for b in blocks)
    rows = []
    for i in range(height):
        parts = [pad(b[i] if i < len(b) else "", w) for b, w in zip(blocks, widths, strict=True)]
        rows.append("".join(parts).rstrip())
    return rows


def cell_text(pid: int, color: bool, width: int = 2) -> str:
    """A cell's symbol padded to ``width`` columns, on its colour (empty cells unpainted)."""
    text = patch_symbol(pid).ljust(width)
    if pid in (EMPTY, UNKNOWN):
        return text
    return paint(text, patch_color(pid), color, background=True)


def shape_text(patch: Patch, color: bool) -> list[str]:
    """The patch as printed in the rules (orientation 0), two columns a cell."""
    height = max(r for r, _ in patch.cells) + 1
    width = max(c for _, c in patch.cells) + 1
    cells = set(patch.cells)
    return [
        "".join(cell_text(patch.id, color) if (r, c) in cells else "  " for c in range(width))
        for r in range(height)
    ]



# ----- the full picture ----------------------------------------------------------------------

def _quilt_grid(game: Game, ids: np.ndarray, player: int, color: bool, gap: str
                ) -> list[str]:
    """The player's name (with ``<- to move``) and the 9x9 grid under its column letters."""
    name = paint(f"player {player}", PLAYER_COLORS[player], color)
    if game.to_move == player:
        name += f"{gap}<- to move"
    lines = [name, "  " + " ".join(_COLUMNS)]
    for r in range(BOARD_SIZE):
        row = ids[player, r * BOARD_SIZE : (r + 1) * BOARD_SIZE]
        lines.append(f"{r + 1} " + "".join(cell_text(int(pid), color) for pid in row))
    return lines


def _text_quilt(game: Game, ids: np.ndarray, score: int, player: int, color: bool) -> list[str]:
    lines = _quilt_grid(game, ids, player, color, gap="  ")
    lines.append(f"buttons {game.buttons[player]:<4} income {game.income[player]}")
    lines.append(f"space {game.position[player]:<6} score {score}")
    if game.bonus_owner == player:
        lines.append(f"holds the {game.rules.bonus_size}x{game.rules.bonus_size} bonus tile")
    return lines


def _track_symbols(game: Game, color: bool) -> list[str]:
    """One symbol per track space: leather patch, income space or a plain space."""
    leather = set(leather_on_track(game))
    income = set(game.rules.income_positions)
    return [paint(LEATHER_SYMBOL, LEATHER_COLOR, color) if x in leather
            else "o" if x in income else "-" for x in range(game.rules.track_end + 1)]


def _text_track(game: Game, color: bool) -> list[str]:
    end = game.rules.track_end
    symbols = _track_symbols(game, color)
    label_width = 12
    lines = []
    for start in range(0, end + 1, _TRACK_CHUNK):
        stop = min(end + 1, start + _TRACK_CHUNK)
        ruler = "".join(f"{x:<10}" for x in range(start, stop, 10))
        lines.append((" " * label_width + ruler).rstrip())
        lines.append(f"{'time track':<{label_width}}" + "".join(symbols[start:stop]))
        for p in range(2):
            pos = game.position[p]
            if start <= pos < stop:
                marker = paint(f"^ {pos}", PLAYER_COLORS[p], color)
                lines.append(f"{f'  player {p}':<{label_width}}" + " " * (pos - start) + marker)
    lines.append(f"{'':<{label_width}}o = income space, {LEATHER_SYMBOL} = leather patch")
    return lines


def _rest_item(pid: int, color: bool) -> str:
    return f"{pid} {cell_text(pid, color, 1)} {figures(PATCHES[pid])}"


def _text_circle(game: Game, color: bool) -> list[str]:
    circle = game.circle
    if not circle:
        return ["the circle is empty"]
    lines = [f"next patches, clockwise from the neutral token (slots 0-{N_SLOTS - 1} can be "
             "bought):"]
    blocks = []
    for slot, pid in enumerate(circle[:N_SLOTS]):
        p = PATCHES[pid]
        head = f"slot {slot}: patch {pid} " + cell_text(pid, color, 1)
        blocks.append([head, f"cost {p.cost}  time {p.time}  income {p.income}",
                       *shape_text(p, color)])
    lines += side_by_side(blocks, _TEXT_SLOT)
    rest = circle[N_SLOTS:]
    if rest:
        prefix = "then (patch, cost/time/income): "
        line = prefix
        for item in (_rest_item(pid, color) for pid in rest):
            if visible_len(line) + 2 + visible_len(item) > _TEXT_WIDTH:
                lines.append(line.rstrip(", ") + ",")
                line = " " * len(prefix)
            line += item + ", "
        lines.append(line.rstrip(", "))
    return lines


def full_text(game: Game, color: bool = True) -> str:
    """The full text picture: big quilts, the track with a ruler, the patches drawn large."""
    ids = quilt_ids(game)
    scores = game.scores()
    lines = [f"Patchwork: {status_text(game, scores)}", ""]
    quilts = [_text_quilt(game, ids, scores[p], p, color) for p in range(2)]
    lines += side_by_side(quilts, _TEXT_PANEL)
    size = game.rules.bonus_size
    bonus = f"bonus tile ({size}x{size}, +{game.rules.bonus_points}): {bonus_holder(game)}"
    lines += ["", bonus, ""]
    lines += _text_track(game, color)
    lines.append("")
    lines += _text_circle(game, color)
    return "\n".join(lines)


# ----- the compact screen --------------------------------------------------------------------

def _compact_quilt(game: Game, ids: np.ndarray, score: int, player: int,
                   color: bool) -> list[str]:
    lines = [line.rstrip() for line in _quilt_grid(game, ids, player, color, gap=" ")]
    lines.append(f"buttons {game.buttons[player]}, income {game.income[player]}")
    lines.append(f"space {game.position[player]}, score {score}")
    return lines


def _wrap_items(items: list[str], width: int, max_lines: int, head: str = "",
                sep: str = "  ") -> list[str]:
    """``head`` and ``items`` in lines of ``width`` columns, at most ``max_lines`` of them;
    items that do not fit are counted in a last ``+N more``."""
    lines, line = [], head
    for i, item in enumerate(items):
        last_line = len(lines) == max_lines - 1
        more = f"+{len(items) - i - 1} more" if i < len(items) - 1 else ""
        need = visible_len(item) + (len(more) + len(sep) if last_line and more else 0)
        if visible_len(line) + need > width:
            if last_line or not line.strip():
                lines.append((line + f"+{len(items) - i} more").rstrip())
                return lines
            lines.append(line.rstrip())
            line = ""
        line += item + sep
    lines.append(line.rstrip())
    return lines[:max_lines]


def _compact_circle(game: Game, color: bool, width: int, height: int) -> list[str]:
    """The buyable patches drawn in their slots, then the next ones: ``height`` lines at most."""
    circle = game.circle
    if not circle:
        return ["the circle is empty"]
    blocks = [[f"slot {slot}", f"#{pid} {figures(PATCHES[pid])}", *shape_text(PATCHES[pid], color)]
              for slot, pid in enumerate(circle[:N_SLOTS])]
    lines = side_by_side(blocks, _SLOT_COLUMN)
    rest = [_rest_item(pid, color) for pid in circle[N_SLOTS:]]
    room = height - len(lines) - 1
    if rest and room > 0:
        lines += ["", *_wrap_items(rest, width, room, "then ")]
    return lines


def _compact_track(game: Game, color: bool, width: int) -> list[str]:
    """The track on one line (more on a long track), tokens shown as the players' digits."""
    symbols = _track_symbols(game, color)
    pos = game.position
    for p in (0, 1) if game.to_move != 0 else (1, 0):  # the player to move is on top
        symbols[pos[p]] = paint(str(p), PLAYER_COLORS[p], color)
    tail = f"  0 at {pos[0]}, 1 at {pos[1]}"
    label = "time "
    room = max(10, width - len(label))
    if len(symbols) + len(tail) <= room:
        return [label + "".join(symbols) + tail]
    lines = [" " * len(label) + "".join(symbols[i : i + room])
             for i in range(0, len(symbols), room)]
    return [label + lines[0][len(label):], *lines[1:], " " * len(label) + tail.strip()]


def compact_text(game: Game, color: bool = True, width: int = COMPACT_WIDTH) -> str:
    """The compact screen: every line at most ``max(width, 44)`` columns wide."""
    ids = quilt_ids(game)
    scores = game.scores()
    quilts = side_by_side([_compact_quilt(game, ids, scores[p], p, color) for p in range(2)],
                          _QUILT_COLUMN)
    size = game.rules.bonus_size
    legend = ["o income,", f"{paint(LEATHER_SYMBOL, LEATHER_COLOR, color)} leather,",
              "patches cost/time/income;",
              f"bonus {size}x{size} +{game.rules.bonus_points}: {bonus_holder(game)}"]
    lines = [clip(f"Patchwork: {status_text(game, scores)}", max(width, 2 * _QUILT_COLUMN))]
    side = width - 2 * _QUILT_COLUMN
    if side >= N_SLOTS * _SLOT_COLUMN:
        panel = _compact_circle(game, color, side, len(quilts))
        lines += side_by_side([quilts, panel], [2 * _QUILT_COLUMN, side])
    else:
        lines += quilts
        lines += _compact_circle(game, color, max(width, N_SLOTS * _SLOT_COLUMN), 9)
    lines += _compact_track(game, color, width)
    lines += _wrap_items(legend, max(width, 2 * _QUILT_COLUMN), 3, sep=" ")
    return "\n".join(lines)
