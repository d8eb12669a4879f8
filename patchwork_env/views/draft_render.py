"""Pictures of a Patchwork Draft position: the text view and an RGB array.

:func:`render_draft_text` is the draft's text view (``str(game)``).
:func:`render_draft_rgb` draws the position with the main game's quilt and patch drawing
(:mod:`patchwork_env.views.render_rgb`): both quilts with their star squares, each player's
buttons, points and score, the face-up row with each patch's cost and star, and the deck.
The deck is drawn face down: its order is hidden (rule 13.1).
"""

from __future__ import annotations

from functools import cache, lru_cache

import numpy as np
from PIL import Image, ImageDraw

from patchwork_env.data.patches import LEATHER_ID, PATCHES
from patchwork_env.data.rules import BOARD_SIZE
from patchwork_env.views.draft_game import DraftGame
from patchwork_env.views.render_common import PLAYER_COLORS, UNKNOWN, hex_rgb
from patchwork_env.views.render_rgb import (
    CELL,
    HEIGHT,
    QUILT_ORIGINS,
    WIDTH,
    _draw_empty_quilt,
    _draw_quilt,
    _draw_shape,
    _text,
)

_BACKGROUND = hex_rgb("#f6f1e7")
_EMPTY_CELL = hex_rgb("#fffdf7")
_GRID = hex_rgb("#d8cfbd")
_INK = hex_rgb("#3b3128")
_FAINT = hex_rgb("#8a7d6b")
_RED = hex_rgb("#c0392b")
_STAR = hex_rgb("#e8b93a")
_DECK = hex_rgb("#9c7b55")

_ROW_TOP = 430
_SLOT_W, _SLOT_H, _SLOT_GAP, _SLOT_CELL = 150, 150, 16, 16
_ROW_LEFT = (WIDTH - 3 * _SLOT_W - 2 * _SLOT_GAP) // 2


def render_draft_text(game: DraftGame) -> str:
    """The position as text: both quilts, buttons, points, scores, the row, the stars."""
    return str(game)


def _star(draw: ImageDraw.ImageDraw, cx: float, cy: float, r: float, fill: tuple) -> None:
    """A five-pointed star centred on ``(cx, cy)``."""
    points = []
    for k in range(10):
        radius = r if k % 2 == 0 else r * 0.45
        angle = np.pi / 2 + k * np.pi / 5
        points.append((cx + radius * np.cos(angle), cy - radius * np.sin(angle)))
    draw.polygon(points, fill=fill)


@lru_cache(maxsize=4)
def _board(star_squares: tuple[int, ...]) -> Image.Image:
    """What does not change during a game: the empty quilts with their star squares."""
    image = Image.new("RGB", (WIDTH, HEIGHT), _BACKGROUND)
    draw = ImageDraw.Draw(image)
    for p in range(2):
        _draw_empty_quilt(draw, p)
        x0, y0 = QUILT_ORIGINS[p]
        for cell in star_squares:
            r, c = divmod(cell, BOARD_SIZE)
            _star(draw, x0 + (c + 0.5) * CELL, y0 + (r + 0.5) * CELL, CELL * 0.35, _STAR)
    _text(draw, (WIDTH / 2, _ROW_TOP - 24), "Face-up row", 14, _INK, "center")
    return image


@cache
def _slot_sprite(pid: int, starred: bool, short: bool) -> Image.Image:
    """A face-up patch in its box with its cost (red: the mover cannot afford it) and its
    star."""
    sprite = Image.new("RGB", (_SLOT_W + 1, _SLOT_H + 1), _BACKGROUND)
    draw = ImageDraw.Draw(sprite)
    draw.rounded_rectangle((0, 0, _SLOT_W, _SLOT_H), radius=8, fill=_EMPTY_CELL, outline=_GRID,
                           width=2)
    _text(draw, (_SLOT_W - 8, 6), f"patch {pid}", 12, _FAINT, "right")
    _draw_shape(draw, PATCHES[pid], _SLOT_W / 2, 66, _SLOT_CELL, buttons=False)
    _text(draw, (_SLOT_W / 2, _SLOT_H - 34), f"cost {PATCHES[pid].cost}", 16,
          _RED if short else _INK, "center")
    if starred:
        _star(draw, 18, 30, 9, _STAR)
    return sprite


def _draw_player(draw: ImageDraw.ImageDraw, game: DraftGame, scores: tuple[int, int],
                 player: int) -> None:
    x0, y0 = QUILT_ORIGINS[player]
    side = BOARD_SIZE * CELL
    top = y0 - 80
    color = PLAYER_COLORS[player]
    if game.to_move == player:
        draw.rounded_rectangle((x0 - 30, top - 6, x0 + side + 12, y0 + side + 12), radius=10,
                               outline=color, width=3)
        _text(draw, (x0 + side, top), "to move", 14, color, "right")
    draw.ellipse((x0, top + 2, x0 + 16, top + 18), fill=color, outline=(255, 255, 255))
    first = ", moved first" if game.first_player == player else ""
    _text(draw, (x0 + 24, top), f"Player {player}{first}", 16, color)
    _text(draw, (x0, top + 26), f"{game.buttons[player]} buttons    {game.points[player]} "
          f"points    score {scores[player]}", 14)


def _draw_middle(draw: ImageDraw.ImageDraw, game: DraftGame) -> None:
    """The face-down deck (its size only) and the patches gone from the game."""
    cx = WIDTH / 2
    draw.rounded_rectangle((cx - 34, 170, cx + 34, 260), radius=6, fill=_DECK, outline=_INK)
    _text(draw, (cx, 200), str(game.deck_size), 22, (255, 255, 255), "center")
    _text(draw, (cx, 268), "face down", 12, _FAINT, "center")
    _text(draw, (cx, 300), f"discarded: {len(game.discarded)}", 12, _FAINT, "center")


def render_draft_rgb(game: DraftGame) -> np.ndarray:
    """An ``(HEIGHT, WIDTH, 3) uint8`` picture of the draft position; the same game, the
    same pixels."""
    image = _board(game.rules.star_squares).copy()
    draw = ImageDraw.Draw(image)
    scores = game.scores()
    if game.is_over:
        w = game.winner
        status = f"Game over: player {w} wins, {scores[w]} to {scores[1 - w]}"
    else:
        status = f"Player {game.to_move} to move"
    _text(draw, (WIDTH / 2, 10), status, 18, _INK, "center")
    ids = game.batch.state[0]["cell_patches"].astype(np.int64)
    ids[ids == LEATHER_ID] = UNKNOWN  # a hand-built position's cells of no named patch
    for p in range(2):
        _draw_player(draw, game, scores, p)
        _draw_quilt(draw, ids, p)
    _draw_middle(draw, game)
    budget = None if game.is_over else game.buttons[game.to_move]
    starred = set(game.rules.starred_patches)
    for slot, pid in enumerate(game.face_up):
        x = _ROW_LEFT + slot * (_SLOT_W + _SLOT_GAP)
        if pid is None:
            _text(draw, (x + _SLOT_W / 2, _ROW_TOP + 60), "empty", 14, _FAINT, "center")
            continue
        short = budget is not None and budget < PATCHES[pid].cost
        image.paste(_slot_sprite(pid, pid in starred, short), (x, _ROW_TOP))
        _text(draw, (x + 8, _ROW_TOP + 6), f"slot {slot}", 12, _FAINT)
    return np.array(image, dtype=np.uint8)


__all__ = ["render_draft_rgb", "render_draft_text"]
