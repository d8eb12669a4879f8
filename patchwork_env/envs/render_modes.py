"""What an environment's ``render()`` returns in each render mode.

``"ansi"`` gives the position as text, ``"rgb_array"`` as an image, ``"human"`` prints
the text; shared by the PettingZoo, Gymnasium and vector environments.
"""

from __future__ import annotations

import warnings

import numpy as np

from patchwork_env.envs.game_kinds import kind_of
from patchwork_env.views.draft_game import DraftGame
from patchwork_env.views.game import Game


def render_game(game: Game | DraftGame, render_mode: str | None) -> str | np.ndarray | None:
    """What ``render()`` returns in ``render_mode``: ``"ansi"`` text, ``"rgb_array"`` an
    image; ``"human"`` prints the text and returns ``None``. Either game is drawn in its
    own way."""
    if render_mode is None:
        warnings.warn("render() called without a render_mode; pass render_mode=... to the "
                      "constructor", stacklevel=3)
        return None
    kind = kind_of(game)
    if render_mode == "rgb_array":
        return kind.render_rgb(game)
    text = kind.render_text(game)
    if render_mode == "ansi":
        return text
    print(text)
    return None
