"""The greedy player of Patchwork Draft, and the compiled one-move evaluation it shares with
the draft's tree search (:mod:`.mcts.draft_search`).

In the draft a button left is a point (rule 13.8), but a player must buy whenever it can
(rule 13.2), so buttons are spent in the end anyway: what counts is what they buy. Rows and
columns (a point and a bonus button each, rule 13.4) and stars (rule 13.5) are the points
a buy earns. A buy is worth the points it earns at once, plus the change in worth of the
buttons held (its cost paid, bonus buttons earned: the first button held is worth most, as
it still buys the cheapest starred patches, each further one less than a point), plus what
it does to the quilt:

* each row and column not yet complete is worth ``line * 2 * (covered / 9) ** power``
  points: a nearly complete line much more than a barely started one, so patches go where
  they bring lines close to completion;
* a line holding an empty cell with no empty neighbour is worth nothing: no patch (the
  smallest has two cells) can ever fill that hole, so the line can never be completed;
* a ragged edge of the free area costs a little (:mod:`.quilt_shape`'s measures);
* an open star square is worth a little (where the rules have starred patches).

Where a player must discard (rule 13.6), the greedy player discards the face-up patch its
opponent would gain most by buying (by this evaluation), or, when the opponent can buy
none, the dearest. Nothing here reads the face-down deck: a buy is valued without
refilling its slot. Deterministic: the seed is accepted for the common interface only.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from patchwork_env.agents.base import Agent, check_rows
from patchwork_env.agents.quilt_shape import isolated_cells, popcount, shape_features
from patchwork_env.data.actions import N_SLOTS, SLOT_STRIDE
from patchwork_env.data.draft_actions import DISCARD_BASE
from patchwork_env.data.tables import LIST_CODE, LIST_MASK, LIST_START, PATCH_COST
from patchwork_env.engine.bits import ONE
from patchwork_env.engine.draft_batch import DraftBatch
from patchwork_env.engine.draft_kernels import LINE_MASKS, completed_lines

LINE_CELLS = 9
"""Cells of a row or a column."""


class DraftWeights(NamedTuple):
    """The draft heuristic's constants, in points."""

    first_button: float = 0.6
    """What holding one button is worth: with one, a player can still buy the cheapest
    starred patches."""
    button: float = 0.27
    """What each further button held is worth: less than the point it would score if kept,
    since a player must buy whenever it can (rule 13.2), often patches that earn nothing."""
    line: float = 0.5
    """Share of its 2 points that a line is worth once all but its last cells are covered."""
    power: float = 2.0
    """How sharply a line's worth rises with its covered cells (see the module docstring)."""
    edge: float = 0.02
    """Per side of an empty cell facing a covered cell or the border."""
    star: float = 0.3
    """Per open star square (where the rules have starred patches)."""


DEFAULT_DRAFT_WEIGHTS = DraftWeights()


@njit(cache=True)
def quilt_potential(q_lo, q_hi, star_lo, star_hi, w):
    """The quilt terms of the value for a player whose covered cells are ``q`` (see the
    module docstring); completed lines count nothing here (they are points already)."""
    dead_lo, dead_hi = isolated_cells(q_lo, q_hi)
    v = 0.0
    for k in range(LINE_MASKS.shape[0]):
        line_lo = LINE_MASKS[k, 0]
        line_hi = LINE_MASKS[k, 1]
        covered = popcount(q_lo & line_lo) + popcount(q_hi & line_hi)
        if covered == LINE_CELLS or ((dead_lo & line_lo) | (dead_hi & line_hi)) != 0:
            continue
        v += w.line * 2.0 * (covered / LINE_CELLS) ** w.power
    _, edge, _, _ = shape_features(q_lo, q_hi)
    v -= w.edge * edge
    open_stars = popcount(star_lo & ~q_lo) + popcount(star_hi & ~q_hi)
    return v + w.star * open_stars


@njit(cache=True)
def buttons_value(buttons, w):
    """What holding ``buttons`` is worth (:attr:`DraftWeights.first_button`,
    :attr:`DraftWeights.button`)."""
    if buttons <= 0:
        return 0.0
    return w.first_button + w.button * (buttons - 1)


@njit(cache=True)
def placement_gain(q_lo, q_hi, patch, m_lo, m_hi, buttons, star_bits, star_lo, star_hi, w):
    """What buying ``patch`` out of ``buttons`` and covering the cells ``m`` of quilt ``q``
    with it is worth: the points it earns at once, the change in worth of the buttons held
    (its cost paid, the bonus buttons earned) and the change of :func:`quilt_potential`."""
    n_lo = q_lo | m_lo
    n_hi = q_hi | m_hi
    lines = completed_lines(n_lo, n_hi, m_lo, m_hi)  # rule 13.4: a point and a button each
    gain = lines + buttons_value(buttons - PATCH_COST[patch] + lines, w) - buttons_value(
        buttons, w)
    starred = (star_bits >> np.uint64(patch)) & ONE
    if starred != 0 and ((m_lo & star_lo) | (m_hi & star_hi)) != 0:  # rule 13.5
        gain += 1.0
    stars_lo = star_lo if star_bits != 0 else np.uint64(0)
    stars_hi = star_hi if star_bits != 0 else np.uint64(0)
    return (gain + quilt_potential(n_lo, n_hi, stars_lo, stars_hi, w)
            - quilt_potential(q_lo, q_hi, stars_lo, stars_hi, w))


@njit(cache=True)
def best_buy(s, p, slot, star_bits, star_lo, star_hi, w):
    """``(action, value)``: player ``p``'s best buy of the face-up patch of ``slot`` and
    what it is worth (:func:`placement_gain`); ``(-1, -inf)`` when ``p`` cannot buy it
    (rule 13.2: affordable, with a legal placement)."""
    patch = s.row[slot]
    if patch < 0 or PATCH_COST[patch] > s.buttons[p]:
        return -1, -np.inf
    q_lo = s.quilt[p, 0]
    q_hi = s.quilt[p, 1]
    best = -1
    best_v = -np.inf
    for j in range(LIST_START[patch], LIST_START[patch + 1]):
        m_lo = LIST_MASK[j, 0]
        m_hi = LIST_MASK[j, 1]
        if (q_lo & m_lo) != 0 or (q_hi & m_hi) != 0:
            continue
        v = placement_gain(q_lo, q_hi, patch, m_lo, m_hi, s.buttons[p], star_bits, star_lo,
                           star_hi, w)
        if v > best_v:
            best_v = v
            best = j
    if best < 0:
        return -1, -np.inf
    return slot * SLOT_STRIDE + np.int64(LIST_CODE[best]), best_v


@njit(cache=True)
def best_discard(s, star_bits, star_lo, star_hi, w):
    """Rule 13.6: the discard that takes away the face-up patch the opponent would gain
    most by buying; the dearest patch when the opponent can buy none."""
    opponent = 1 - s.to_move
    best = -1
    best_v = -np.inf
    dearest = -1
    for slot in range(N_SLOTS):
        patch = s.row[slot]
        if patch < 0:
            continue
        if dearest < 0 or PATCH_COST[patch] > PATCH_COST[s.row[dearest]]:
            dearest = slot
        _, v = best_buy(s, opponent, slot, star_bits, star_lo, star_hi, w)
        if v > best_v:
            best_v = v
            best = slot
    return DISCARD_BASE + (best if best >= 0 else dearest)


@njit(cache=True)
def greedy_action(s, star_bits, star_lo, star_hi, w):
    """The greedy move of the player to move in ``s``: the buy worth most, or, when
    nothing can be bought, :func:`best_discard`."""
    p = s.to_move
    best = -1
    best_v = -np.inf
    for slot in range(N_SLOTS):
        a, v = best_buy(s, p, slot, star_bits, star_lo, star_hi, w)
        if a >= 0 and v > best_v:
            best_v = v
            best = a
    if best < 0:
        return best_discard(s, star_bits, star_lo, star_hi, w)
    return best


@njit(cache=True)
def greedy_actions(state, rows, star_bits, star_lo, star_hi, w, out):
    """:func:`greedy_action` for the games ``state[rows]``."""
    for i in range(rows.shape[0]):
        out[i] = greedy_action(state[rows[i]], star_bits, star_lo, star_hi, w)


class DraftGreedyAgent(Agent):
    """Plays the draft heuristic's best move (see the module docstring)."""

    spec = "greedy"

    def __init__(self, seed: int | None = None,
                 weights: DraftWeights = DEFAULT_DRAFT_WEIGHTS) -> None:
        super().__init__(seed)
        self.weights = weights

    def act(self, batch: DraftBatch, rows: np.ndarray) -> np.ndarray:
        rows = check_rows(batch, rows)
        out = np.empty(len(rows), np.int64)
        greedy_actions(batch.state, rows, *batch.move_args, self.weights, out)
        return out
