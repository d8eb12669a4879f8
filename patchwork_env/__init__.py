"""patchwork-env: a fast, vectorised reinforcement-learning environment for Patchwork.

>>> import patchwork_env
>>> game = patchwork_env.Game.new(seed=0)
>>> batch = patchwork_env.GameBatch.new(1024, seed=0)
"""

from .actions import ADVANCE, LEATHER_BASE, N_ACTIONS, format_action, parse_action
from .engine import GameBatch
from .game import Game
from .patches import LEATHER, PATCHES, Patch
from .rules import PRESETS, Rules, get_rules

__version__ = "0.1.0"

__all__ = [
    "ADVANCE",
    "LEATHER",
    "LEATHER_BASE",
    "N_ACTIONS",
    "PATCHES",
    "PRESETS",
    "Game",
    "GameBatch",
    "Patch",
    "Rules",
    "format_action",
    "get_rules",
    "parse_action",
]
