"""The two games the page plays, Patchwork and Patchwork Draft, as data.

A :class:`WebGame` says what the server needs of one game: how a game starts, how its
moves are read, named, described and refused, which patch a move takes, the patches in
the row's slots, the rest of a position the page draws, its rules presets and the agents
the page suggests. A session holds one, so the server and the page serve both games
through one implementation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from patchwork_env.agents import GAME_NAMES
from patchwork_env.agents.human import describe_move, explain_illegal
from patchwork_env.data.actions import (
    ADVANCE,
    LEATHER_BASE,
    N_ACTIONS,
    SLOT_STRIDE,
    format_action,
    parse_action,
)
from patchwork_env.data.draft_actions import (
    N_DRAFT_ACTIONS,
    format_draft_action,
    parse_draft_action,
)
from patchwork_env.data.draft_rules import DRAFT_PRESETS
from patchwork_env.data.patches import LEATHER_ID
from patchwork_env.data.rules import PRESETS
from patchwork_env.views.draft_game import DraftGame
from patchwork_env.views.game import Game
from patchwork_env.web import draft_state
from patchwork_env.web.state import patchwork_details


@dataclass(frozen=True)
class WebGame:
    """What the server needs of one game (see the module)."""

    name: str
    """``"patchwork"`` or ``"draft"``, as ``agents.make(game=...)`` names it."""
    new: Callable[[int, str], Any]
    """``(seed, rules preset) -> game``."""
    n_actions: int
    parse: Callable[[str], int]
    notation: Callable[[int], str]
    describe: Callable[[Any, int], str]
    why_illegal: Callable[[Any, int], str]
    """Why an action is not legal, in one line."""
    patch_of: Callable[[Any, int], int | None]
    offer: Callable[[Any], list[int | None]]
    """The patch in each of the three slots a buy names (``None``: none)."""
    details: Callable[[Any], dict[str, Any]]
    """``session -> dict``: what a position adds to what both games share."""
    presets: tuple[str, ...]
    agents: tuple[str, ...]
    """Agents the page suggests."""

    @property
    def title(self) -> str:
        return GAME_NAMES[self.name]


def _patchwork_illegal(game: Game, action: int) -> str:
    why = explain_illegal(game, action, width=10_000).splitlines()
    return "; ".join(" ".join(line.split()) for line in why)


def _patchwork_patch(game: Game, action: int) -> int | None:
    if action < ADVANCE:
        return game.circle[action // SLOT_STRIDE]
    return LEATHER_ID if action >= LEATHER_BASE else None


PATCHWORK = WebGame(
    "patchwork", lambda seed, rules: Game.new(seed, rules=rules), N_ACTIONS, parse_action,
    format_action, describe_move, _patchwork_illegal, _patchwork_patch,
    lambda game: [game.circle[s] if s < len(game.circle) else None for s in range(3)],
    patchwork_details, tuple(PRESETS),
    ("random", "greedy", "mcts:200", "mcts:1s", "az", "az-policy", "ppo"))

DRAFT = WebGame(
    "draft", lambda seed, rules: DraftGame.new(seed, rules=rules), N_DRAFT_ACTIONS,
    parse_draft_action, format_draft_action, draft_state.describe, draft_state.why_illegal,
    draft_state.patch_of, lambda game: game.face_up, draft_state.draft_details,
    tuple(DRAFT_PRESETS), ("random", "greedy", "mcts:200", "mcts:1s"))

WEB_GAMES = {kind.name: kind for kind in (PATCHWORK, DRAFT)}
"""The games the page plays, by name."""
