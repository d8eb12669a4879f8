"""Pictures of a position: ANSI text for a terminal, an RGB array for people and videos.

:func:`render_text` draws both quilts side by side (each patch in its own letter, ``A`` for
patch 0 up to ``Z`` for patch 25 and ``a`` .. ``g`` for patches 26 .. 32, ``*`` for a
leather patch, ``.`` for an empty cell), the time track, each player's figures and the
patches of the circle. Cells are named as in :mod:`patchwork_env.actions`: column letter,
then row number, ``a1`` at the top left.

:func:`render_rgb` draws the same position with Pillow as an ``(HEIGHT, WIDTH, 3)`` uint8
array: the quilts at the sides, the time track as a spiral between them, the circle below.
Its layout is fixed, so :func:`quilt_cell_box` says where any quilt cell is drawn.

A state rebuilt from a dict that does not record which patch covers each cell knows only
that the cells are covered; such cells are drawn plainly (``#`` in text, grey in RGB).
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .patches import LEATHER_ID, PATCHES, Patch
from .rules import BOARD_SIZE

if TYPE_CHECKING:
    from .game import Game

RGB = tuple[int, int, int]

EMPTY = -1
"""Id of an empty cell in ``cell_patches``."""
UNKNOWN = -2
"""Id this module gives a covered cell whose patch the state does not record."""

PATCH_SYMBOLS = string.ascii_uppercase + "abcdefg"
"""The letter of each patch in text, indexed by patch id."""
LEATHER_SYMBOL = "*"
UNKNOWN_SYMBOL = "#"
EMPTY_SYMBOL = "."


def _hex(code: str) -> RGB:
    return (int(code[1:3], 16), int(code[3:5], 16), int(code[5:7], 16))


PATCH_COLORS: tuple[RGB, ...] = tuple(_hex(c) for c in (
    "#d95f5f", "#f2a07b", "#f4a259", "#e07a3f", "#e9c46a", "#f3e08a", "#a7c957", "#6a994e",
    "#2a9d8f", "#7fcdc3", "#3d5a6c", "#4f83b5", "#a9d6e5", "#27476e", "#6d6fd8", "#a99cf0",
    "#8443c2", "#cf94f2", "#f28482", "#f5a8c8", "#b5408f", "#d9577f", "#8fbf3a", "#52b788",
    "#bfe3c8", "#ffc93c", "#5fb4d9", "#3a7bd5", "#9cbf7e", "#f7884a", "#6c809a", "#43aa8b",
    "#c98bb9",
))
"""The fabric colour of each patch, indexed by patch id."""
LEATHER_COLOR: RGB = (133, 94, 66)
UNKNOWN_COLOR: RGB = (168, 162, 150)
PLAYER_COLORS: tuple[RGB, RGB] = ((36, 92, 170), (196, 52, 48))
"""The colour of each player's time token and name."""

# ----- what is on each quilt cell -----------------------------------------------------------


def _patch_symbol(pid: int) -> str:
    """The text letter of a cell holding patch ``pid`` (or :data:`EMPTY`, :data:`UNKNOWN`)."""
    if pid == EMPTY:
        return EMPTY_SYMBOL
    if pid == UNKNOWN:
        return UNKNOWN_SYMBOL
    return LEATHER_SYMBOL if pid == LEATHER_ID else PATCH_SYMBOLS[pid]


def _patch_color(pid: int) -> RGB:
    """The RGB colour of a cell holding patch ``pid`` (a patch id, leather or unknown)."""
    if pid == UNKNOWN:
        return UNKNOWN_COLOR
    return LEATHER_COLOR if pid == LEATHER_ID else PATCH_COLORS[pid]


def _quilt_ids(game: Game) -> np.ndarray:
    """``(2, 81)`` ids of what covers each cell: a patch id, leather, empty or unknown.

    A rebuilt state without the cell record marks every covered cell as leather; when the
    quilts hold more such cells than leather patches have left the track, they are unknown.
    """
    ids = game.batch.state[0]["cell_patches"].astype(np.int64)
    taken = sum(1 for x in game.rules.leather_positions if x <= max(game.position))
    if int((ids == LEATHER_ID).sum()) > taken:
        ids[ids == LEATHER_ID] = UNKNOWN
    return ids


def _leather_on_track(game: Game) -> list[int]:
    front = max(game.position)
    return [x for x in game.rules.leather_positions if x > front]


def _status(game: Game, s: tuple[int, int]) -> str:
    if game.is_over:
        w = game.winner
        return f"game over: player {w} wins, {s[w]} to {s[1 - w]}"
    text = f"player {game.to_move} to move"
    n = game.pending_leather
    if n:
        text += f", {n} leather patch{'es' if n > 1 else ''} to place"
    return text


def _bonus_holder(game: Game) -> str:
    return "not yet won" if game.bonus_owner is None else f"player {game.bonus_owner}"


# ----- text --------------------------------------------------------------------------------

_RESET = "\x1b[0m"
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
_CUBE = (0, 95, 135, 175, 215, 255)
_TRACK_CHUNK = 80
_TEXT_PANEL = 38
_TEXT_SLOT = 30
_TEXT_WIDTH = 96


def _cube_level(value: int) -> int:
    return min(range(len(_CUBE)), key=lambda i: abs(_CUBE[i] - value))


@cache
def _xterm256(rgb: RGB) -> int:
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


def _paint(text: str, rgb: RGB, color: bool, background: bool = False) -> str:
    """``text`` in colour ``rgb`` (as foreground, or as background with a readable ink)."""
    if not color:
        return text
    if background:
        ink = 16 if _is_light(rgb) else 231
        return f"\x1b[48;5;{_xterm256(rgb)};38;5;{ink}m{text}{_RESET}"
    return f"\x1b[1;38;5;{_xterm256(rgb)}m{text}{_RESET}"


def _visible_len(text: str) -> int:
    return len(_ANSI_RE.sub("", text))


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _visible_len(text))


def _side_by_side(blocks: Sequence[Sequence[str]], width: int) -> list[str]:
    """Blocks of lines next to each other, each padded to ``width`` visible columns."""
    height = max(len(b) for b in blocks)
    rows = []
    for i in range(height):
        parts = [_pad(b[i] if i < len(b) else "", width) for b in blocks]
        rows.append("".join(parts).rstrip())
    return rows


def _cell_text(pid: int, color: bool, width: int = 2) -> str:
    """A cell's symbol padded to ``width`` columns, on its colour (empty cells unpainted)."""
    text = _patch_symbol(pid).ljust(width)
    if pid in (EMPTY, UNKNOWN):
        return text
    return _paint(text, _patch_color(pid), color, background=True)


def _text_quilt(game: Game, ids: np.ndarray, score: int, player: int, color: bool) -> list[str]:
    name = _paint(f"player {player}", PLAYER_COLORS[player], color)
    if game.to_move == player:
        name += "  <- to move"
    lines = [name, "  " + " ".join(string.ascii_lowercase[:BOARD_SIZE])]
    for r in range(BOARD_SIZE):
        row = ids[player, r * BOARD_SIZE : (r + 1) * BOARD_SIZE]
        lines.append(f"{r + 1} " + "".join(_cell_text(int(pid), color) for pid in row))
    lines.append(f"buttons {game.buttons[player]:<4} income {game.income[player]}")
    lines.append(f"space {game.position[player]:<6} score {score}")
    if game.bonus_owner == player:
        lines.append(f"holds the {game.rules.bonus_size}x{game.rules.bonus_size} bonus tile")
    return lines


def _text_track(game: Game, color: bool) -> list[str]:
    end = game.rules.track_end
    leather = set(_leather_on_track(game))
    income = set(game.rules.income_positions)
    label_width = 12
    lines = []
    for start in range(0, end + 1, _TRACK_CHUNK):
        stop = min(end + 1, start + _TRACK_CHUNK)
        ruler = "".join(f"{x:<10}" for x in range(start, stop, 10))
        lines.append((" " * label_width + ruler).rstrip())
        spaces = []
        for x in range(start, stop):
            if x in leather:
                spaces.append(_paint(LEATHER_SYMBOL, LEATHER_COLOR, color))
            elif x in income:
                spaces.append("o")
            else:
                spaces.append("-")
        lines.append(f"{'time track':<{label_width}}" + "".join(spaces))
        for p in range(2):
            pos = game.position[p]
            if start <= pos < stop:
                marker = _paint(f"^ {pos}", PLAYER_COLORS[p], color)
                lines.append(f"{f'  player {p}':<{label_width}}" + " " * (pos - start) + marker)
    lines.append(f"{'':<{label_width}}o = income space, {LEATHER_SYMBOL} = leather patch")
    return lines


def _text_shape(patch: Patch, color: bool) -> list[str]:
    height = max(r for r, _ in patch.cells) + 1
    width = max(c for _, c in patch.cells) + 1
    cells = set(patch.cells)
    return [
        "".join(_cell_text(patch.id, color) if (r, c) in cells else "  " for c in range(width))
        for r in range(height)
    ]


def _figures(patch: Patch) -> str:
    return f"{patch.cost}/{patch.time}/{patch.income}"


def _text_circle(game: Game, color: bool) -> list[str]:
    circle = game.circle
    if not circle:
        return ["the circle is empty"]
    lines = ["next patches, clockwise from the neutral token (slots 0-2 can be bought):"]
    blocks = []
    for slot, pid in enumerate(circle[:3]):
        p = PATCHES[pid]
        head = f"slot {slot}: patch {pid} " + _cell_text(pid, color, 1)
        blocks.append([head, f"cost {p.cost}  time {p.time}  income {p.income}",
                       *_text_shape(p, color)])
    lines += _side_by_side(blocks, _TEXT_SLOT)
    rest = circle[3:]
    if rest:
        prefix = "then (patch, cost/time/income): "
        items = [f"{pid} {_cell_text(pid, color, 1)} {_figures(PATCHES[pid])}"
                 for pid in rest]
        line = prefix
        for item in items:
            if _visible_len(line) + 2 + _visible_len(item) > _TEXT_WIDTH:
                lines.append(line.rstrip(", ") + ",")
                line = " " * len(prefix)
            line += item + ", "
        lines.append(line.rstrip(", "))
    return lines


def render_text(game: Game, color: bool = True) -> str:
    """A text picture of the position; ANSI colours only when ``color`` is true."""
    ids = _quilt_ids(game)
    scores = game.scores()
    lines = [f"Patchwork: {_status(game, scores)}", ""]
    quilts = [_text_quilt(game, ids, scores[p], p, color) for p in range(2)]
    lines += _side_by_side(quilts, _TEXT_PANEL)
    size = game.rules.bonus_size
    bonus = f"bonus tile ({size}x{size}, +{game.rules.bonus_points}): {_bonus_holder(game)}"
    lines += ["", bonus, ""]
    lines += _text_track(game, color)
    lines.append("")
    lines += _text_circle(game, color)
    return "\n".join(lines)


# ----- RGB layout --------------------------------------------------------------------------

WIDTH, HEIGHT = 900, 600
"""Size of the :func:`render_rgb` picture in pixels."""
CELL = 30
"""Side of a quilt cell in pixels."""
QUILT_ORIGINS: tuple[tuple[int, int], tuple[int, int]] = (
    (44, 122),
    (WIDTH - 44 - BOARD_SIZE * CELL, 122),
)
"""Pixel ``(x, y)`` of the top-left corner of each player's quilt."""

_TRACK_BOX = (330, 166, 570, 346)  # the area the spiral is fitted into
_CIRCLE_TOP = 418
_SLOT_BOX = (20, _CIRCLE_TOP + 20, 134, 160)  # left, top, width, height of slot 0's box
_SLOT_CELL = 16
# the patches after the buyable three: 3 rows of 10 small sprites
_REST_LEFT, _REST_TOP = 462, _CIRCLE_TOP + 32
_REST_COLS, _REST_W, _REST_H, _REST_CELL = 10, 43, 49, 6

_BACKGROUND = _hex("#f6f1e7")
_EMPTY_CELL = _hex("#fffdf7")
_GRID = _hex("#d8cfbd")
_SEAM = _hex("#4a3b2c")
_INK = _hex("#3b3128")
_FAINT = _hex("#8a7d6b")
_SPACE = _hex("#ece2cc")
_SPACE_EDGE = _hex("#c4b28f")
_PATH = _hex("#bba682")
_BUTTON = _hex("#f3e4b8")
_BUTTON_EDGE = _hex("#6b5640")
_BONUS = _hex("#e8b93a")
_RED = _hex("#c0392b")


def quilt_cell_box(player: int, cell: int) -> tuple[int, int, int, int]:
    """Pixel box ``(x0, y0, x1, y1)`` (exclusive ends) of ``cell`` on ``player``'s quilt.

    The cell's fill colour covers at least the box shrunk by ``CELL // 5`` on each side,
    outside a centred disc of radius ``CELL // 5`` that may hold a button symbol.
    """
    row, col = divmod(cell, BOARD_SIZE)
    x0, y0 = QUILT_ORIGINS[player]
    return x0 + col * CELL, y0 + row * CELL, x0 + (col + 1) * CELL, y0 + (row + 1) * CELL


@cache
def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow before 10.1 has only its small bitmap font
        return ImageFont.load_default()


def _text(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, size: int,
          fill: RGB = _INK, align: str = "left") -> None:
    """Text with its top at ``xy[1]``, left-aligned, centred or right-aligned at ``xy[0]``."""
    font = _font(size)
    for i, line in enumerate(text.split("\n")):
        x = xy[0]
        if align != "left":
            width = draw.textlength(line, font=font)
            x -= width / 2 if align == "center" else width
        draw.text((x, xy[1] + i * (size + 4)), line, fill=fill, font=font)


def _button(draw: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    """The button symbol: a disc with two holes."""
    draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=_BUTTON, outline=_BUTTON_EDGE)
    h = max(1.0, r / 4)
    for dx in (-r / 3, r / 3):
        draw.ellipse((cx + dx - h, cy - h, cx + dx + h, cy + h), fill=_BUTTON_EDGE)


def _button_cells(cells: Sequence[int], income: int) -> list[int]:
    """Which of a patch's cells carry its ``income`` button symbols, spread over the patch."""
    return [cells[(j * len(cells)) // income] for j in range(income)] if income else []


def _draw_cells(draw: ImageDraw.ImageDraw, grid: np.ndarray, x0: int, y0: int, size: int,
                buttons: bool) -> None:
    """Fill a grid of cell ids and stitch seams where neighbouring ids differ."""
    rows, cols = grid.shape
    for r in range(rows):
        for c in range(cols):
            pid = int(grid[r, c])
            if pid == EMPTY:
                continue
            draw.rectangle((x0 + c * size, y0 + r * size, x0 + (c + 1) * size - 1,
                            y0 + (r + 1) * size - 1), fill=_patch_color(pid))
    if buttons:
        for pid in set(grid.ravel().tolist()) - {EMPTY, UNKNOWN, LEATHER_ID}:
            cells = np.flatnonzero(grid.ravel() == pid).tolist()
            for cell in _button_cells(cells, PATCHES[pid].income):
                r, c = divmod(cell, cols)
                _button(draw, x0 + (c + 0.5) * size, y0 + (r + 0.5) * size, size // 5)
    width = 2 if size >= 12 else 1
    for r in range(rows):
        for c in range(cols):
            pid = int(grid[r, c])
            right = int(grid[r, c + 1]) if c + 1 < cols else EMPTY
            below = int(grid[r + 1, c]) if r + 1 < rows else EMPTY
            left = int(grid[r, c - 1]) if c > 0 else EMPTY
            above = int(grid[r - 1, c]) if r > 0 else EMPTY
            xa, ya, xb, yb = x0 + c * size, y0 + r * size, x0 + (c + 1) * size, y0 + (r + 1) * size
            # an edge is a seam where it bounds a patch; unknown cells are all separate
            for (a, b), (p0, p1) in (((pid, right), ((xb, ya), (xb, yb))),
                                     ((pid, below), ((xa, yb), (xb, yb))),
                                     ((pid, left), ((xa, ya), (xa, yb))),
                                     ((pid, above), ((xa, ya), (xb, ya)))):
                if max(a, b) != EMPTY and (a != b or a == UNKNOWN):
                    draw.line((p0, p1), fill=_SEAM, width=width)


def _draw_empty_quilt(draw: ImageDraw.ImageDraw, player: int) -> None:
    x0, y0 = QUILT_ORIGINS[player]
    side = BOARD_SIZE * CELL
    draw.rectangle((x0, y0, x0 + side, y0 + side), fill=_EMPTY_CELL)
    for i in range(BOARD_SIZE + 1):
        draw.line((x0 + i * CELL, y0, x0 + i * CELL, y0 + side), fill=_GRID)
        draw.line((x0, y0 + i * CELL, x0 + side, y0 + i * CELL), fill=_GRID)
    for i in range(BOARD_SIZE):
        _text(draw, (x0 + (i + 0.5) * CELL, y0 - 17), string.ascii_lowercase[i], 12, _FAINT,
              "center")
        _text(draw, (x0 - 8, y0 + i * CELL + 8), str(i + 1), 12, _FAINT, "right")


def _draw_quilt(draw: ImageDraw.ImageDraw, ids: np.ndarray, player: int) -> None:
    x0, y0 = QUILT_ORIGINS[player]
    side = BOARD_SIZE * CELL
    _draw_cells(draw, ids[player].reshape(BOARD_SIZE, BOARD_SIZE), x0, y0, CELL, buttons=True)
    draw.rectangle((x0, y0, x0 + side, y0 + side), outline=_SEAM, width=2)


def _draw_player(draw: ImageDraw.ImageDraw, game: Game, score: int, player: int) -> None:
    x0, y0 = QUILT_ORIGINS[player]
    side = BOARD_SIZE * CELL
    top = y0 - 80
    color = PLAYER_COLORS[player]
    if game.to_move == player:
        draw.rounded_rectangle((x0 - 30, top - 6, x0 + side + 12, y0 + side + 12), radius=10,
                               outline=color, width=3)
        _text(draw, (x0 + side, top), "to move", 14, color, "right")
    draw.ellipse((x0, top + 2, x0 + 16, top + 18), fill=color, outline=(255, 255, 255))
    _text(draw, (x0 + 24, top), f"Player {player}", 16, color)
    buttons, income = game.buttons[player], game.income[player]
    _button(draw, x0 + 8, top + 34, 7)
    _text(draw, (x0 + 22, top + 26), f"{buttons} buttons    income {income}    score {score}",
          14)
    if game.bonus_owner == player:
        _bonus_tile(draw, x0 + side - 34, top + 26, game.rules.bonus_size,
                    game.rules.bonus_points)


@lru_cache(maxsize=8)
def _spiral(n: int) -> tuple[tuple[float, float], ...]:
    """Centre ``(x, y)`` of each of ``n`` track spaces on a clockwise spiral ending inside."""
    left, top, right, bottom = _TRACK_BOX
    cols = min(n, math.ceil(math.sqrt(1.5 * n)))
    rows = math.ceil(n / cols)
    size = min((right - left) // cols, (bottom - top) // rows, 30)
    ox = (left + right - cols * size) / 2
    oy = (top + bottom - rows * size) / 2
    order = []
    t, lft, b, rgt = 0, 0, rows - 1, cols - 1
    while t <= b and lft <= rgt:
        order += [(t, c) for c in range(lft, rgt + 1)]
        order += [(r, rgt) for r in range(t + 1, b + 1)]
        if t < b:
            order += [(b, c) for c in range(rgt - 1, lft - 1, -1)]
        if lft < rgt:
            order += [(r, lft) for r in range(b - 1, t, -1)]
        t, lft, b, rgt = t + 1, lft + 1, b - 1, rgt - 1
    # unused cells, if any, are at the outer start so that the track ends in the middle
    order = order[len(order) - n :]
    return tuple((ox + (c + 0.5) * size, oy + (r + 0.5) * size) for r, c in order)


def _track_cell(n: int) -> float:
    centres = _spiral(n)
    if n == 1:
        return 30.0
    (xa, ya), (xb, yb) = centres[0], centres[1]
    return abs(xb - xa) + abs(yb - ya)


def _draw_empty_track(draw: ImageDraw.ImageDraw, end: int, income: tuple[int, ...]) -> None:
    centres = _spiral(end + 1)
    size = _track_cell(end + 1)
    half = size / 2 - 3
    left, top, right, bottom = _TRACK_BOX
    _text(draw, ((left + right) / 2, top - 24), "time track", 14, _INK, "center")
    draw.line(centres, fill=_PATH, width=max(2, round(size / 5)))
    for x, (cx, cy) in enumerate(centres):
        draw.rounded_rectangle((cx - half, cy - half, cx + half, cy + half), radius=3,
                               fill=_BONUS if x == end else _SPACE, outline=_SPACE_EDGE)
        if x % 10 == 0:
            _text(draw, (cx - half + 2, cy - half + 1), str(x), 8, _FAINT)
    for x in income:
        _button(draw, *centres[x], size / 4)
    ly = bottom + 12
    _button(draw, left + 30, ly + 7, 6)
    _text(draw, (left + 40, ly), "income", 12, _FAINT)
    draw.rectangle((left + 114, ly + 2, left + 124, ly + 12), fill=LEATHER_COLOR, outline=_SEAM)
    _text(draw, (left + 130, ly), "leather patch", 12, _FAINT)


def _draw_track(draw: ImageDraw.ImageDraw, game: Game) -> None:
    end = game.rules.track_end
    centres = _spiral(end + 1)
    size = _track_cell(end + 1)
    for x in _leather_on_track(game):
        cx, cy = centres[x]
        q = size / 4
        draw.rectangle((cx - q, cy - q, cx + q, cy + q), fill=LEATHER_COLOR, outline=_SEAM)
    _draw_tokens(draw, game, centres, size)
    left, ly = _TRACK_BOX[0], _TRACK_BOX[3] + 12
    _bonus_tile(draw, left + 30, ly + 28, game.rules.bonus_size, game.rules.bonus_points)
    _text(draw, (left + 72, ly + 31), f"bonus tile: {_bonus_holder(game)}", 12, _INK)


def _bonus_tile(draw: ImageDraw.ImageDraw, x: float, y: float, size: int, points: int) -> None:
    """The bonus tile as a small gold badge with its square and points, left edge at ``x``."""
    draw.rounded_rectangle((x - 8, y, x + 34, y + 18), radius=4, fill=_BONUS, outline=_SEAM)
    _text(draw, (x + 13, y + 3), f"{size}x{size}+{points}", 10, _INK, "center")


def _draw_tokens(draw: ImageDraw.ImageDraw, game: Game, centres: Sequence[tuple[float, float]],
                 size: float) -> None:
    pos = game.position
    shared = pos[0] == pos[1]
    # on a shared space the player who arrived last is on top: the one to move
    order = (1 - game.to_move, game.to_move) if shared and game.to_move is not None else (0, 1)
    r = size * (0.3 if shared else 0.36)
    for p in order:
        cx, cy = centres[pos[p]]
        if shared:
            shift = size * (0.16 if p == order[1] else -0.16)
            cx, cy = cx + shift, cy + shift
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=PLAYER_COLORS[p],
                     outline=(255, 255, 255), width=2)
        _text(draw, (cx, cy - 6), str(p), 11, (255, 255, 255), "center")


def _shape_grid(patch: Patch) -> np.ndarray:
    height = max(r for r, _ in patch.cells) + 1
    width = max(c for _, c in patch.cells) + 1
    grid = np.full((height, width), EMPTY, np.int64)
    for r, c in patch.cells:
        grid[r, c] = patch.id
    return grid


def _draw_shape(draw: ImageDraw.ImageDraw, patch: Patch, cx: float, cy: float, size: int,
                buttons: bool) -> None:
    """A patch centred on ``(cx, cy)`` with cells of ``size`` pixels."""
    grid = _shape_grid(patch)
    h, w = grid.shape
    _draw_cells(draw, grid, round(cx - w * size / 2), round(cy - h * size / 2), size, buttons)


def _draw_circle(image: Image.Image, draw: ImageDraw.ImageDraw, game: Game) -> None:
    circle = game.circle
    if not circle:
        _text(draw, (20, _CIRCLE_TOP + 24), "the circle is empty", 14, _FAINT)
        return
    left, top, width, _ = _SLOT_BOX
    budget = None if game.is_over else game.buttons[game.to_move]
    for slot, pid in enumerate(circle[:3]):
        x = left + slot * (width + 10)
        short = budget is not None and budget < PATCHES[pid].cost
        image.paste(_slot_sprite(pid, short), (x, top))
        _text(draw, (x + 8, top + 6), f"slot {slot}", 12, _FAINT)
    rest = circle[3:]
    if rest:
        _text(draw, (_REST_LEFT, _CIRCLE_TOP + 14), "then (cost/time/income)", 11, _FAINT)
    for i, pid in enumerate(rest[: 3 * _REST_COLS]):
        row, col = divmod(i, _REST_COLS)
        image.paste(_rest_sprite(pid), (_REST_LEFT + col * _REST_W, _REST_TOP + row * _REST_H))


@cache
def _slot_sprite(pid: int, short: bool) -> Image.Image:
    """A buyable patch in its box with its figures; ``short``: its cost shown in red."""
    _, _, width, height = _SLOT_BOX
    p = PATCHES[pid]
    sprite = Image.new("RGB", (width + 1, height + 1), _BACKGROUND)
    draw = ImageDraw.Draw(sprite)
    draw.rounded_rectangle((0, 0, width, height), radius=8, fill=_EMPTY_CELL, outline=_GRID,
                           width=2)
    _text(draw, (width - 8, 6), f"patch {pid}", 12, _FAINT, "right")
    _draw_shape(draw, p, width / 2, 62, _SLOT_CELL, buttons=True)
    for i, (value, name) in enumerate(((p.cost, "cost"), (p.time, "time"), (p.income, "income"))):
        fx = width * (2 * i + 1) / 6
        ink = _RED if short and name == "cost" else _INK
        _text(draw, (fx, height - 42), str(value), 16, ink, "center")
        _text(draw, (fx, height - 20), name, 10, _FAINT, "center")
    return sprite


@cache
def _rest_sprite(pid: int) -> Image.Image:
    """A patch further round the circle, drawn small above its cost/time/income."""
    sprite = Image.new("RGB", (_REST_W, _REST_H), _BACKGROUND)
    draw = ImageDraw.Draw(sprite)
    _draw_shape(draw, PATCHES[pid], _REST_W / 2, 17, _REST_CELL, buttons=False)
    _text(draw, (_REST_W / 2, 34), _figures(PATCHES[pid]), 10, _FAINT, "center")
    return sprite


@lru_cache(maxsize=4)
def _board(end: int, income: tuple[int, ...]) -> Image.Image:
    """Everything that does not change during a game: empty quilts, track, headings."""
    image = Image.new("RGB", (WIDTH, HEIGHT), _BACKGROUND)
    draw = ImageDraw.Draw(image)
    for p in range(2):
        _draw_empty_quilt(draw, p)
    _draw_empty_track(draw, end, income)
    _text(draw, (20, _CIRCLE_TOP - 4), "Next patches, clockwise from the neutral token", 14)
    return image


def render_rgb(game: Game) -> np.ndarray:
    """An ``(HEIGHT, WIDTH, 3) uint8`` picture of the position; the same game, the same pixels."""
    image = _board(game.rules.track_end, game.rules.income_positions).copy()
    draw = ImageDraw.Draw(image)
    scores = game.scores()
    _text(draw, (WIDTH / 2, 10), _status(game, scores).capitalize(), 18, _INK, "center")
    ids = _quilt_ids(game)
    for p in range(2):
        _draw_player(draw, game, scores[p], p)
        _draw_quilt(draw, ids, p)
    _draw_track(draw, game)
    _draw_circle(image, draw, game)
    return np.array(image, dtype=np.uint8)


__all__ = [
    "CELL",
    "HEIGHT",
    "LEATHER_COLOR",
    "PATCH_COLORS",
    "PATCH_SYMBOLS",
    "PLAYER_COLORS",
    "QUILT_ORIGINS",
    "UNKNOWN_COLOR",
    "WIDTH",
    "quilt_cell_box",
    "render_rgb",
    "render_text",
]
