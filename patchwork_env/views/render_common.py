"""What both pictures of a position share: what covers each cell, symbols and colours.

The text pictures (:mod:`patchwork_env.views.render_text`) and the RGB picture
(:mod:`patchwork_env.views.render_rgb`) read the position through these helpers, so both draw
the same facts with the same letters and colours.

A state rebuilt from a dict that does not record which patch covers each cell knows only
that the cells are covered; such cells get the id :data:`UNKNOWN` and are drawn plainly.
"""

from __future__ import annotations

import string
from typing import TYPE_CHECKING

import numpy as np

from patchwork_env.data.patches import LEATHER_ID, Patch

if TYPE_CHECKING:
    from patchwork_env.views.game import Game

RGB = tuple[int, int, int]

EMPTY = -1
"""Id of an empty cell in ``cell_patches``."""
UNKNOWN = -2
"""Id given to a covered cell whose patch the state does not record."""

PATCH_SYMBOLS = string.ascii_uppercase + "abcdefg"
"""The letter of each patch in text, indexed by patch id."""
LEATHER_SYMBOL = "*"
UNKNOWN_SYMBOL = "#"
EMPTY_SYMBOL = "."


def hex_rgb(code: str) -> RGB:
    """``"#rrggbb"`` as an ``(r, g, b)`` tuple."""
    return (int(code[1:3], 16), int(code[3:5], 16), int(code[5:7], 16))


PATCH_COLORS: tuple[RGB, ...] = tuple(hex_rgb(c) for c in (
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


def patch_symbol(pid: int) -> str:
    """The text letter of a cell holding patch ``pid`` (or :data:`EMPTY`, :data:`UNKNOWN`)."""
    if pid == EMPTY:
        return EMPTY_SYMBOL
    if pid == UNKNOWN:
        return UNKNOWN_SYMBOL
    return LEATHER_SYMBOL if pid == LEATHER_ID else PATCH_SYMBOLS[pid]


def patch_color(pid: int) -> RGB:
    """The RGB colour of a cell holding patch ``pid`` (a patch id, leather or unknown)."""
    if pid == UNKNOWN:
        return UNKNOWN_COLOR
    return LEATHER_COLOR if pid == LEATHER_ID else PATCH_COLORS[pid]


def quilt_ids(game: Game) -> np.ndarray:
    """``(2, 81)`` ids of what covers each cell: a patch id, leather, empty or unknown.

    A rebuilt state without the cell record marks every covered cell as leather; when the
    quilts hold more such cells than leather patches have left the track, they are unknown.
    """
    ids = game.batch.state[0]["cell_patches"].astype(np.int64)
    taken = sum(1 for x in game.rules.leather_positions if x <= max(game.position))
    if int((ids == LEATHER_ID).sum()) > taken:
        ids[ids == LEATHER_ID] = UNKNOWN
    return ids


def leather_on_track(game: Game) -> list[int]:
    """The spaces of the leather patches still lying on the time track."""
    front = max(game.position)
    return [x for x in game.rules.leather_positions if x > front]


def status_text(game: Game, scores: tuple[int, int]) -> str:
    """``player 0 to move`` (with pending leather patches) or who won, by how much."""
    if game.is_over:
        w = game.winner
        return f"game over: player {w} wins, {scores[w]} to {scores[1 - w]}"
    text = f"player {game.to_move} to move"
    n = game.pending_leather
    if n:
        text += f", {n} leather patch{'es' if n > 1 else ''} to place"
    return text


def bonus_holder(game: Game) -> str:
    """Who holds the bonus tile, in words."""
    return "not yet won" if game.bonus_owner is None else f"player {game.bonus_owner}"


def figures(patch: Patch) -> str:
    """``cost/time/income`` of a patch."""
    return f"{patch.cost}/{patch.time}/{patch.income}"
