"""The two games the environments play, Patchwork and Patchwork Draft, as data.

A :class:`GameKind` names what an environment needs of a game: its batch and one-game
classes, its action count, its rules, how setups are drawn, what a player sees and how a
position is drawn. The duel, the opponents and the environments read it instead of naming
one game's classes, so both games share one implementation of each. :func:`kind_of` finds
the kind of a batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from patchwork_env.data.actions import N_ACTIONS
from patchwork_env.data.draft_actions import N_DRAFT_ACTIONS
from patchwork_env.data.draft_rules import get_draft_rules
from patchwork_env.data.rules import get_rules
from patchwork_env.engine.batch import GameBatch, random_setup, random_setups
from patchwork_env.engine.draft_batch import DraftBatch, draft_random_setup, draft_random_setups
from patchwork_env.views.draft_game import DraftGame
from patchwork_env.views.draft_observation import draft_layout, observe_draft_unchecked
from patchwork_env.views.draft_render import render_draft_rgb, render_draft_text
from patchwork_env.views.game import Game
from patchwork_env.views.observation import layout, observe_unchecked
from patchwork_env.views.render import render_rgb, render_text


class GameKind(NamedTuple):
    """What the environments need of one game."""

    name: str
    batch_type: type
    """:class:`GameBatch` or :class:`DraftBatch`."""
    game_type: type
    """:class:`Game` or :class:`DraftGame` (each has ``from_batch``)."""
    n_actions: int
    get_rules: Callable[[Any], Any]
    setup_option: str
    """The reset option that fixes the patches' order: ``"circle"`` or ``"deck"``."""
    random_setup: Callable[..., tuple[Any, int]]
    """``(rng, setup=None, first_player=None) -> (setup, first player)``, as ``new(seed)``."""
    random_setups: Callable[..., tuple[Any, Any]]
    """``(rng, n) -> (setups, first players)``, as the batch's ``reset(rng)`` draws them."""
    observe: Callable[..., Any]
    """``(state, rules, seats) -> (N, size) float32``, unchecked."""
    layout: Callable[[Any], Any]
    """``rules -> layout`` with ``space``, ``size`` and ``split``."""
    render_rgb: Callable[[Any], Any]
    render_text: Callable[[Any], str]


PATCHWORK = GameKind("patchwork", GameBatch, Game, N_ACTIONS, get_rules, "circle", random_setup,
                     random_setups, observe_unchecked, layout, render_rgb, render_text)
DRAFT = GameKind("draft", DraftBatch, DraftGame, N_DRAFT_ACTIONS, get_draft_rules, "deck",
                 draft_random_setup, draft_random_setups, observe_draft_unchecked,
                 draft_layout, render_draft_rgb, render_draft_text)


KINDS = {kind.name: kind for kind in (PATCHWORK, DRAFT)}
"""Every game the project serves, by name."""


def kind_of(batch_or_game: Any) -> GameKind:
    """The :class:`GameKind` of a batch or one-game view."""
    if isinstance(batch_or_game, DraftBatch | DraftGame):
        return DRAFT
    return PATCHWORK


__all__ = ["DRAFT", "KINDS", "PATCHWORK", "GameKind", "kind_of"]
