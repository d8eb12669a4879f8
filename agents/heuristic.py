"""The compiled one-move evaluation shared by the greedy player and the MCTS tree.

The value of a position for player ``p`` counts what is already certain and what the
quilt and the time track still promise:

* buttons, plus income times the income spaces still ahead, minus ``time`` buttons per
  space of the time track already used;
* -2 per empty cell and the bonus tile when held (the final score);
* the shape of the free area: its ragged edge, isolated holes, dead ends, and whether the
  next patches of the circle still fit anywhere;
* progress towards the 7x7 bonus once a square is nearly covered.

A buy is then worth ``value(after) - value(before)``, i.e. the patch's income over the rest
of the game + 2 per cell - its cost - its time, corrected by what it does to the quilt;
advancing is worth the buttons it pays less the time it spends, plus the leather patches
it wins. Where to place a patch is chosen by the quilt terms alone (the rest of the value
does not depend on the placement). The weights were tuned in greedy-against-greedy and
greedy-against-random matches.

The compiled functions take the rules as ``rules``, a
:class:`~patchwork_env.data.tables.RuleArrays` (``GameBatch.tables.arrays``), and the
constants as ``w``, a :class:`Weights`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from patchwork_env.agents.quilt_shape import best_square_cover, popcount, shape_features
from patchwork_env.data.actions import ADVANCE, LEATHER_BASE, N_SLOTS, SLOT_STRIDE
from patchwork_env.data.tables import CELL_MASKS, LIST_CODE, LIST_MASK, LIST_START, PATCH_COST
from patchwork_env.engine.kernels import apply_action


class Weights(NamedTuple):
    """The heuristic's constants, in buttons (points) unless noted."""

    time: float = 2.0
    """Buttons one space of the time track is worth: more than the one button advancing
    pays, since time also buys income and patches."""
    edge: float = 0.4
    """Per side of an empty cell facing a covered cell or the border."""
    isolated: float = 1.5
    """Per empty cell with no empty neighbour."""
    dead_end: float = 0.25
    """Per empty cell with exactly one empty neighbour."""
    blocked: float = 1.0
    """Per patch among the next ``lookahead`` of the circle that no longer fits."""
    lookahead: int = 3
    """How many upcoming patches must keep room."""
    bonus_from: int = 36
    """Cells of the best 7x7 square from which covering more of it is rewarded."""
    bonus_step: float = 0.4
    """Per cell of the best 7x7 square beyond ``bonus_from``."""


DEFAULT_WEIGHTS = Weights()


@njit(cache=True)
def fits_anywhere(q_lo, q_hi, patch):
    """Whether ``patch`` has a placement on the quilt ``q``."""
    for j in range(LIST_START[patch], LIST_START[patch + 1]):
        if (q_lo & LIST_MASK[j, 0]) == 0 and (q_hi & LIST_MASK[j, 1]) == 0:
            return True
    return False


@njit(cache=True)
def quilt_value(q_lo, q_hi, bonus_state, upcoming, rules, w, floor=-np.inf):
    """The quilt terms of the value for one player.

    ``bonus_state`` is 1 if the player holds the bonus tile, 0 if nobody does (so it can
    still be won), -1 if the opponent does; ``upcoming`` lists the next patches of the
    circle (those beyond ``w.lookahead`` are ignored). Once the value is sure not to
    exceed ``floor``, some number no greater than ``floor`` is returned without finishing
    (searching for the best placement, most candidates stop after the shape terms).
    """
    squares = rules.bonus_masks
    bonus_points = rules.bonus_points
    empty, edge, isolated, dead_ends = shape_features(q_lo, q_hi)
    v = -2.0 * empty - w.edge * edge - w.isolated * isolated - w.dead_end * dead_ends
    if bonus_state == 1:
        v += bonus_points
    elif bonus_state == 0:
        square = popcount(squares[0, 0]) + popcount(squares[0, 1])
        if v + max(bonus_points, w.bonus_step * (square - w.bonus_from)) <= floor:
            return v
        cover = best_square_cover(q_lo, q_hi, squares)
        if cover == square:
            v += bonus_points  # this placement wins the tile
        elif cover >= w.bonus_from:
            v += w.bonus_step * (cover - w.bonus_from)
    for k in range(min(w.lookahead, upcoming.shape[0])):
        if v <= floor:
            return v
        if not fits_anywhere(q_lo, q_hi, upcoming[k]):
            v -= w.blocked
    return v


@njit(cache=True, inline="always")
def _bonus_state(s, p):
    if s.bonus_owner < 0:
        return 0
    return 1 if s.bonus_owner == p else -1


@njit(cache=True)
def position_value(s, p, rules, w):
    """The heuristic value of game ``s`` for player ``p`` (see the module docstring)."""
    income_before = rules.income_before
    pos = np.int64(s.position[p])
    incomes_ahead = income_before[rules.track_end] - income_before[pos]
    v = np.float64(s.buttons[p]) + s.income[p] * incomes_ahead - w.time * pos
    upcoming = s.circle[: s.circle_len]
    return v + quilt_value(s.quilt[p, 0], s.quilt[p, 1], _bonus_state(s, p), upcoming, rules, w)


@njit(cache=True)
def _best_mask(masks, q_lo, q_hi, state, upcoming, rules, w):
    """Index of the mask in ``masks`` ((k, 2) bitboards) that fits the quilt and leaves it
    the highest value, -1 if none fits."""
    best = -1
    best_v = -np.inf
    for j in range(masks.shape[0]):
        m_lo = masks[j, 0]
        m_hi = masks[j, 1]
        if (q_lo & m_lo) != 0 or (q_hi & m_hi) != 0:
            continue
        v = quilt_value(q_lo | m_lo, q_hi | m_hi, state, upcoming, rules, w, best_v)
        if v > best_v:
            best_v = v
            best = j
    return best


@njit(cache=True)
def best_leather(s, rules, w):
    """The leather action for the player to move: the cell whose filling helps the quilt most."""
    p = s.to_move
    q_lo = s.quilt[p, 0]
    q_hi = s.quilt[p, 1]
    upcoming = s.circle[: s.circle_len]
    best = _best_mask(CELL_MASKS, q_lo, q_hi, _bonus_state(s, p), upcoming, rules, w)
    return LEATHER_BASE + best


@njit(cache=True)
def best_placement(s, slot, rules, w):
    """The best buy of the patch in ``slot`` for the player to move, -1 if it fits nowhere.

    Affordability is the caller's business. The upcoming patches are those that follow the
    bought one once the neutral token has moved onto it.
    """
    p = s.to_move
    n = np.int64(s.circle_len)
    patch = s.circle[slot]
    upcoming = np.empty(max(n - 1, 0), np.int8)
    for k in range(n - 1):
        upcoming[k] = s.circle[(slot + 1 + k) % n]
    q_lo = s.quilt[p, 0]
    q_hi = s.quilt[p, 1]
    placements = LIST_MASK[LIST_START[patch] : LIST_START[patch + 1]]
    best = _best_mask(placements, q_lo, q_hi, _bonus_state(s, p), upcoming, rules, w)
    if best < 0:
        return -1
    return slot * SLOT_STRIDE + np.int64(LIST_CODE[LIST_START[patch] + best])


@njit(cache=True)
def play_and_settle(s, a, rules, w):
    """Play ``a`` in ``s``, then place any leather patches it won with :func:`best_leather`."""
    p = s.to_move
    apply_action(s, a, rules.income_before, rules.leather_spaces, rules.bonus_masks,
                 rules.track_end)
    while s.to_move == p and s.pending_leather > 0:
        apply_action(s, best_leather(s, rules, w), rules.income_before, rules.leather_spaces,
                     rules.bonus_masks, rules.track_end)


@njit(cache=True)
def can_buy(s, slot):
    """Whether the player to move can afford the patch in ``slot`` (placement aside)."""
    if slot >= min(N_SLOTS, np.int64(s.circle_len)):
        return False
    return PATCH_COST[s.circle[slot]] <= s.buttons[s.to_move]


@njit(cache=True)
def greedy_action(s, rules, w, scratch):
    """The greedy move in ``s``: the best of advancing and each slot's best buy.

    ``scratch`` is a one-record state array used to try the candidates.
    """
    if s.pending_leather > 0:
        return best_leather(s, rules, w)
    p = s.to_move
    best = ADVANCE
    scratch[0] = s
    play_and_settle(scratch[0], ADVANCE, rules, w)
    best_v = position_value(scratch[0], p, rules, w)
    for slot in range(N_SLOTS):
        if not can_buy(s, slot):
            continue
        a = best_placement(s, slot, rules, w)
        if a < 0:
            continue
        scratch[0] = s
        play_and_settle(scratch[0], a, rules, w)
        v = position_value(scratch[0], p, rules, w)
        if v > best_v:
            best_v = v
            best = a
    return best


@njit(cache=True)
def greedy_actions(state, rows, rules, w, out):
    """:func:`greedy_action` for the games ``state[rows]``."""
    scratch = np.empty(1, state.dtype)
    for i in range(rows.shape[0]):
        out[i] = greedy_action(state[rows[i]], rules, w, scratch)
