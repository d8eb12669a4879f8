"""The games the search-guided agents play, Patchwork and Patchwork Draft, as data.

An :class:`AZGame` names what the Gumbel search (:mod:`.search`), the network
(:mod:`.net`) and the trainer need of a game: its state records, its action count, its
rules, what the network sees, the arguments of its compiled move and the compiled
functions the search's loops call (:data:`AZGame.kernel_functions`: the search compiles
one copy of its loops per game with these in place of Patchwork's). The two games share
the buy actions' encoding (0..1943), so the placement head of the network serves both;
Patchwork adds advancing and the leather patches, the draft its three discards.
:func:`get_game` finds a game by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from patchwork_env.agents.az.playouts import playout_values
from patchwork_env.agents.az.tree import outcome_values
from patchwork_env.data.actions import N_ACTIONS
from patchwork_env.data.draft_actions import N_DRAFT_ACTIONS
from patchwork_env.data.draft_rules import get_draft_rules
from patchwork_env.data.rules import get_rules
from patchwork_env.data.tables import RuleTables
from patchwork_env.engine.batch import GameBatch, sample_legal
from patchwork_env.engine.draft_batch import DraftBatch, sample_draft_legal, star_args
from patchwork_env.engine.draft_batch_kernels import enumerate_legal as draft_enumerate_legal
from patchwork_env.engine.draft_kernels import DRAFT_STATE_DTYPE
from patchwork_env.engine.draft_kernels import apply_action as draft_apply_action
from patchwork_env.engine.draft_kernels import score as draft_score
from patchwork_env.engine.draft_kernels import winner as draft_winner
from patchwork_env.engine.draft_kernels import write_legal_mask as draft_write_legal_mask
from patchwork_env.engine.draft_serialize import draft_state_from_dict, draft_state_to_dict
from patchwork_env.engine.kernels import STATE_DTYPE
from patchwork_env.engine.serialize import state_from_dict, state_to_dict
from patchwork_env.views.draft_observation import draft_layout, observe_draft_unchecked
from patchwork_env.views.observation import layout, observe


@njit(cache=True)
def draft_outcome_value(s, p, bonus_points, score_weight, score_scale):
    """The result of the finished draft game ``s`` for player ``p`` in [-1, 1], as
    :func:`~.tree.outcome_value` values Patchwork's (``bonus_points``: unused, the draft
    has no bonus tile)."""
    v = 1.0 if draft_winner(s) == p else -1.0
    if score_weight > 0.0:
        diff = (draft_score(s, p) - draft_score(s, 1 - p)) / score_scale
        v = (1.0 - score_weight) * v + score_weight * min(1.0, max(-1.0, diff))
    return v


@njit(cache=True)
def draft_outcome_values(states, players, bonus_points, score_weight, score_scale, out):
    """``out[i]``: :func:`draft_outcome_value` of finished game ``states[i]`` for
    ``players[i]``."""
    for i in range(states.shape[0]):
        out[i] = draft_outcome_value(states[i], players[i], bonus_points, score_weight,
                                     score_scale)


def draft_playout_values(states: np.ndarray, rules: Any, playouts: int, seed: int,
                         score_weight: float = 0.0, score_scale: float = 20.0) -> np.ndarray:
    """``(N,) float32``: for each unfinished draft position of ``states``, the mean result
    of ``playouts`` uniformly random playouts for the player to move there, as
    :func:`~.playouts.playout_values` estimates Patchwork's; each playout draws from a
    deck redealt from ``seed``, never from the hidden order."""
    if playouts < 1:
        raise ValueError(f"playouts must be at least 1, got {playouts}")
    n = len(states)
    if n == 0:
        return np.zeros(0, np.float32)
    rng = np.random.default_rng(seed)
    dealt = redeal_hidden(np.repeat(states, playouts), rules, int(rng.integers(2**63)))
    games = DraftBatch(dealt, rules, rng)
    games.playout()
    players = np.repeat(states["to_move"].astype(np.int64), playouts)
    out = np.empty(n * playouts, np.float64)
    draft_outcome_values(games.state, players, 0, score_weight, score_scale, out)
    return out.reshape(n, playouts).mean(axis=1).astype(np.float32)


def redeal_hidden(states: np.ndarray, rules: Any, seed: int) -> np.ndarray:
    """Copies of the draft positions ``states`` with each face-down deck in an order drawn
    from ``seed`` alone: the deck is put in a fixed order (by patch id) first, so the
    result depends on what the players see and the seed, never on the hidden order."""
    deck, drawn = states["deck"], states["drawn"].astype(np.int64)
    cols = np.arange(deck.shape[1])
    hidden = cols[None, :] >= drawn[:, None]
    keys = np.where(hidden, deck.astype(np.int64) + deck.shape[1], cols[None, :])
    canonical = states.copy()
    canonical["deck"] = np.take_along_axis(deck, np.argsort(keys, axis=1, kind="stable"),
                                           axis=1)
    return DraftBatch(canonical, rules).redeal(seed).state


def _round_trip_patchwork(record: np.void, rules: Any) -> None:
    state_from_dict(state_to_dict(record, rules), rules)


def _round_trip_draft(record: np.void, rules: Any) -> None:
    draft_state_from_dict(draft_state_to_dict(record, rules), rules)


def _patchwork_move_args(rules: Any) -> tuple:
    arrays = RuleTables.of(rules).arrays
    return (arrays.income_before, arrays.leather_spaces, arrays.bonus_masks,
            arrays.track_end)


def _observe_patchwork(states: np.ndarray, rules: Any, out: np.ndarray | None = None
                       ) -> np.ndarray:
    return observe(states, rules, None, out=out)


def _observe_draft(states: np.ndarray, rules: Any, out: np.ndarray | None = None
                   ) -> np.ndarray:
    return observe_draft_unchecked(states, rules, states["to_move"].clip(0).astype(np.int64),
                                   out)


class AZGame(NamedTuple):
    """What the search, the network and the trainer need of one game."""

    name: str
    n_actions: int
    state_dtype: np.dtype
    get_rules: Callable[[Any], Any]
    """A preset name (or rules) -> the game's rules object."""
    observation_size: Callable[[Any], int]
    """rules -> the size of an observation."""
    observe: Callable[..., np.ndarray]
    """``(states, rules, out=None) -> (N, size) float32``: each game seen by its player
    to move."""
    move_args: Callable[[Any], tuple]
    """rules -> the arguments of the compiled ``apply_action`` after the state and the
    action."""
    bonus_points: Callable[[Any], int]
    """rules -> the third argument of the compiled outcome value."""
    kernel_functions: dict[str, Any]
    """The compiled functions the search's loops call, by the names they call them."""
    batch_type: type
    """:class:`~patchwork_env.GameBatch` or :class:`~patchwork_env.engine.draft_batch.DraftBatch`
    (``batch_type(states, rules)``: legal masks, scores, winners, steps)."""
    outcome_values: Callable[..., None]
    """Compiled ``(states, players, bonus_points, score_weight, score_scale, out)``: the
    finished games' results as the search values them."""
    playout_values: Callable[..., np.ndarray]
    """``(states, rules, playouts, seed, score_weight, score_scale) -> (N,) float32``: mean
    results of random playouts."""
    redeal: Callable[[np.ndarray, Any, int], np.ndarray] | None
    """``(states, rules, seed) -> states`` with the hidden part of each position drawn
    again from ``seed`` (what a searching player may read); ``None``: nothing is hidden."""
    round_trip: Callable[[np.void, Any], None]
    """Check that a state record is one a game can reach (through its state dict);
    ``ValueError`` or ``TypeError`` if not."""
    sample_legal: Callable[..., np.ndarray]
    """``(masks, rng) -> (N,) int64``: an action drawn uniformly from each legal mask."""


PATCHWORK = AZGame("patchwork", N_ACTIONS, STATE_DTYPE, get_rules,
                   lambda rules: layout(rules).size, _observe_patchwork,
                   _patchwork_move_args, lambda rules: rules.bonus_points, {}, GameBatch,
                   outcome_values, playout_values, None, _round_trip_patchwork, sample_legal)
DRAFT = AZGame("draft", N_DRAFT_ACTIONS, DRAFT_STATE_DTYPE, get_draft_rules,
               lambda rules: draft_layout(rules).size, _observe_draft, star_args,
               lambda rules: 0,
               {"enumerate_legal": draft_enumerate_legal, "apply_action": draft_apply_action,
                "write_legal_mask": draft_write_legal_mask,
                "outcome_value": draft_outcome_value},
               DraftBatch, draft_outcome_values, draft_playout_values, redeal_hidden,
               _round_trip_draft, sample_draft_legal)
GAMES = {g.name: g for g in (PATCHWORK, DRAFT)}
"""The games by name."""

def get_game(game: str | AZGame) -> AZGame:
    """The game of a name (``"patchwork"`` or ``"draft"``) or an :class:`AZGame`;
    ``ValueError`` naming the choices otherwise."""
    if isinstance(game, AZGame):
        return game
    if isinstance(game, str) and game in GAMES:
        return GAMES[game]
    raise ValueError(f"unknown game {game!r}: choose one of {', '.join(GAMES)}")


__all__ = ["DRAFT", "GAMES", "PATCHWORK", "AZGame", "draft_outcome_value",
           "draft_outcome_values", "draft_playout_values", "get_game", "redeal_hidden"]
