"""Pictures of a position: ANSI text for a terminal, an RGB array for people and videos.

This module is the public face of the renderer; the work is done in

* :mod:`patchwork_env.views.render_text`: the text pictures, the full one (``str(game)``) and
  the compact one that fits a standard 80x24 terminal;
* :mod:`patchwork_env.views.render_rgb`: the Pillow picture, with :func:`quilt_cell_box` saying
  where each quilt cell is drawn;
* :mod:`patchwork_env.views.render_common`: what both share (what covers each cell, the letter
  and colour of each patch, the status line).

A state rebuilt from a dict that does not record which patch covers each cell knows only
that the cells are covered; such cells are drawn plainly (``#`` in text, grey in RGB).
"""

from __future__ import annotations

from patchwork_env.views.render_common import (
    LEATHER_COLOR,
    PATCH_COLORS,
    PATCH_SYMBOLS,
    PLAYER_COLORS,
    UNKNOWN_COLOR,
)
from patchwork_env.views.render_rgb import (
    CELL,
    HEIGHT,
    QUILT_ORIGINS,
    WIDTH,
    quilt_cell_box,
    render_rgb,
)
from patchwork_env.views.render_text import COMPACT_LINES, COMPACT_WIDTH, LAYOUTS, render_text

__all__ = [
    "CELL",
    "COMPACT_LINES",
    "COMPACT_WIDTH",
    "HEIGHT",
    "LAYOUTS",
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
