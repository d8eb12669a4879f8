"""patchwork-env: a fast, vectorised reinforcement-learning environment for Patchwork.

>>> import patchwork_env
>>> game = patchwork_env.Game.new(seed=0)
>>> batch = patchwork_env.GameBatch.new(1024, seed=0)
"""

from .actions import ADVANCE, LEATHER_BASE, N_ACTIONS, format_action, parse_action
from .aec import env, raw_env
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
    "env",
    "format_action",
    "get_rules",
    "parse_action",
    "raw_env",
]


def _register() -> None:
    """Make the environments known to ``gymnasium.make`` and ``pettingzoo.make``."""
    import gymnasium
    import pettingzoo

    gymnasium.register(id="patchwork_env/Patchwork-v0",
                       entry_point="patchwork_env.gym_env:PatchworkEnv",
                       vector_entry_point="patchwork_env.vector_env:PatchworkVectorEnv")
    if hasattr(pettingzoo, "register"):  # the registry exists from pettingzoo 1.27
        pettingzoo.register("aec", "patchwork_env/patchwork-v0",
                            entry_point="patchwork_env.aec:env")


_register()
