"""patchwork-env: a fast, vectorised reinforcement-learning environment for Patchwork.

>>> import patchwork_env
>>> game = patchwork_env.Game.new(seed=0)
>>> batch = patchwork_env.GameBatch.new(1024, seed=0)
"""

from patchwork_env.data.actions import ADVANCE, LEATHER_BASE, N_ACTIONS, format_action, parse_action
from patchwork_env.data.patches import LEATHER, PATCHES, Patch
from patchwork_env.data.rules import PRESETS, Rules, get_rules
from patchwork_env.engine.batch import GameBatch
from patchwork_env.engine.draft_batch import DraftBatch
from patchwork_env.envs.aec import env, raw_env
from patchwork_env.views.draft_game import DraftGame
from patchwork_env.views.game import Game

__version__ = "0.1.0"

__all__ = [
    "ADVANCE",
    "LEATHER",
    "LEATHER_BASE",
    "N_ACTIONS",
    "PATCHES",
    "PRESETS",
    "DraftBatch",
    "DraftGame",
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
                       entry_point="patchwork_env.envs.gym_env:PatchworkEnv",
                       vector_entry_point="patchwork_env.envs.vector_env:PatchworkVectorEnv")
    gymnasium.register(id="patchwork_env/PatchworkDraft-v0",
                       entry_point="patchwork_env.envs.draft_gym:PatchworkDraftEnv",
                       vector_entry_point="patchwork_env.envs.draft_gym:PatchworkDraftVectorEnv")
    if hasattr(pettingzoo, "register"):  # the registry exists from pettingzoo 1.27
        pettingzoo.register("aec", "patchwork_env/patchwork-v0",
                            entry_point="patchwork_env.envs.aec:env")
        pettingzoo.register("aec", "patchwork_env/patchwork_draft-v0",
                            entry_point="patchwork_env.envs.draft_aec:env")


_register()
