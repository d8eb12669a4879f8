"""The RGB picture of a position, drawn with Pillow, for people and videos.

:func:`render_rgb` draws the position as an ``(HEIGHT, WIDTH, 3)`` uint8 array: the quilts
at the sides, the time track as a spiral between them, the circle below. Its layout is
fixed, so :func:`quilt_cell_box` says where any quilt cell is drawn. Everything that does
not change during a game is drawn once per rule set and copied.
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from patchwork_env.data.actions import N_SLOTS
from patchwork_env.data.patches import LEATHER_ID, PATCHES, Patch
from patchwork_env.data.rules import BOARD_SIZE
from patchwork_env.views.render_common import (
    EMPTY,
    LEATHER_COLOR,
    PLAYER_COLORS,
    RGB,
    UNKNOWN,
    bonus_holder,
    figures,
    hex_rgb,
    leather_on_track,
    patch_color,
    quilt_ids,
    status_text,
)

if TYPE_CHECKING:
    from patchwork_env.views.game import Game

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

_BACKGROUND = hex_rgb("#f6f1e7")
_EMPTY_CELL = hex_rgb("#fffdf7")
_GRID = hex_rgb("#d8cfbd")
_SEAM = hex_rgb("#4a3b2c")
_INK = hex_rgb("#3b3128")
_FAINT = hex_rgb("#8a7d6b")
_SPACE = hex_rgb("#ece2cc")
_SPACE_EDGE = hex_rgb("#c4b28f")
_PATH = hex_rgb("#bba682")
_BUTTON = hex_rgb("#f3e4b8")
_BUTTON_EDGE = hex_rgb("#6b5640")
_BONUS = hex_rgb("#e8b93a")
_RED = hex_rgb("#c0392b")


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
                            y0 + (r + 1) * size - 1), fill=patch_color(pid))
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
    for x in leather_on_track(game):
        cx, cy = centres[x]
        q = size / 4
        draw.rectangle((cx - q, cy - q, cx + q, cy + q), fill=LEATHER_COLOR, outline=_SEAM)
    _draw_tokens(draw, game, centres, size)
    left, ly = _TRACK_BOX[0], _TRACK_BOX[3] + 12
    _bonus_tile(draw, left + 30, ly + 28, game.rules.bonus_size, game.rules.bonus_points)
    _text(draw, (left + 72, ly + 31), f"bonus tile: {bonus_holder(game)}", 12, _INK)


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
    for slot, pid in enumerate(circle[:N_SLOTS]):
        x = left + slot * (width + 10)
        short = budget is not None and budget < PATCHES[pid].cost
        image.paste(_slot_sprite(pid, short), (x, top))
        _text(draw, (x + 8, top + 6), f"slot {slot}", 12, _FAINT)
    rest = circle[N_SLOTS:]
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
    _text(draw, (_REST_W / 2, 34), figures(PATCHES[pid]), 10, _FAINT, "center")
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
    _text(draw, (WIDTH / 2, 10), status_text(game, scores).capitalize(), 18, _INK, "center")
    ids = quilt_ids(game)
    for p in range(2):
        _draw_player(draw, game, scores[p], p)
        _draw_quilt(draw, ids, p)
    _draw_track(draw, game)
    _draw_circle(image, draw, game)
    return np.array(image, dtype=np.uint8)


