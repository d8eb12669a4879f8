"""The rules of Patchwork Draft, compiled: one game's state and everything a turn does.

Section 13 of docs/rules.md; each function cites the rule it implements. The patches,
placement tables and bit machinery are the main game's (:mod:`.kernels`, :mod:`.bits`,
:mod:`patchwork_env.data.tables`); what is new is the face-up row with its deck, the
points for rows, columns and stars, and the end. Every function works on one record ``s``
of :data:`DRAFT_STATE_DTYPE`; the batch loops are in :mod:`.draft_batch_kernels`. The star
arguments (``star_bits``, ``star_lo``, ``star_hi``) come from
:class:`~patchwork_env.data.draft_rules.DraftRules`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from patchwork_env.data.actions import N_CELLS, N_SLOTS, SLOT_STRIDE
from patchwork_env.data.draft_actions import DISCARD_BASE, N_DRAFT_ACTIONS
from patchwork_env.data.patches import N_PATCHES
from patchwork_env.data.rules import BOARD_SIZE
from patchwork_env.data.tables import (
    ORIENT_ID,
    ORIENT_START,
    PATCH_COST,
    PLACEMENT_LEGAL,
    PLACEMENT_MASKS,
    cells_to_words,
)
from patchwork_env.engine.bits import ONE, covers, fill_set_bits, random_below, write_bitboard
from patchwork_env.engine.kernels import empty_words, fits, free_anchors

DRAFT_STATE_DTYPE = np.dtype(
    [
        ("quilt", np.uint64, (2, 2)),  # [player, word] bitboards
        ("cell_patches", np.int8, (2, N_CELLS)),  # patch id on each cell, -1 empty
        ("buttons", np.int16, (2,)),
        ("points", np.int16, (2,)),  # rows, columns (rule 13.4) and stars (rule 13.5)
        ("row", np.int8, (N_SLOTS,)),  # face-up patch of each slot, -1 empty (game over)
        ("deck", np.int8, (N_PATCHES,)),  # deck[drawn:] is the face-down deck, top first
        ("drawn", np.int8),
        ("to_move", np.int8),  # -1 once the game is over
        ("first_player", np.int8),
    ],
    align=True,
)
"""One draft game's complete state; a batch is a 1-D array of these records."""

LINE_MASKS = np.array(
    [cells_to_words([r * BOARD_SIZE + c for c in range(BOARD_SIZE)]) for r in range(BOARD_SIZE)]
    + [cells_to_words([r * BOARD_SIZE + c for r in range(BOARD_SIZE)]) for c in range(BOARD_SIZE)],
    dtype=np.uint64)
"""``(18, 2)``: the nine rows, then the nine columns of a quilt (rule 13.4)."""

DISCARD_BLOCK = np.uint64(2**N_SLOTS - 1)
"""The three discard actions as one block of :func:`visit_legal`, bit ``k`` for slot ``k``."""

# Why a step was refused (OK = 0: legal): the codes of :func:`check_action`.
(OK, ERR_GAME_OVER, ERR_OUT_OF_RANGE, ERR_BAD_PLACEMENT, ERR_TOO_EXPENSIVE, ERR_OVERLAP,
 ERR_CAN_BUY) = range(7)

# ---------------------------------------------------------------------------------------
# Setup, rule 13.1: empty quilts, the start buttons, the 33 patches shuffled into one deck,
# the top three face up, a first player drawn at random. Functions that write a record's
# fields in a loop are compiled on their own (not inlined): inlined into a parallel batch
# loop, such writes were lost.


@njit(cache=True, inline="always")
def shuffle(rng, arr, lo, hi):
    """Shuffle ``arr[lo:hi]`` in place (Fisher-Yates); returns the generator's new state."""
    for j in range(hi - 1, lo, -1):
        rng, k = random_below(rng, j - lo + 1)
        arr[j], arr[lo + k] = arr[lo + k], arr[j]
    return rng


@njit(cache=True, inline="always")
def draw_deck(rng, deck):
    """Rule 13.1: fill ``deck`` with every patch id in random order; returns
    ``(rng, first player)``."""
    for k in range(N_PATCHES):
        deck[k] = k
    rng = shuffle(rng, deck, 0, N_PATCHES)
    return random_below(rng, 2)


@njit(cache=True)
def set_up(s, first_player, start_buttons):
    """Rule 13.1: ``s`` before the first turn, its ``deck`` already in order; the top three
    patches go face up. Rule 13.7 (b): a game in which no player can buy any patch is
    over."""
    s.quilt[:, :] = 0
    s.cell_patches[:, :] = -1
    s.buttons[:] = start_buttons
    s.points[:] = 0
    for slot in range(N_SLOTS):
        s.row[slot] = s.deck[slot]
    s.drawn = N_SLOTS
    s.first_player = first_player
    s.to_move = first_player
    if not game_goes_on(s, first_player, 1 - first_player):
        s.to_move = -1


@njit(cache=True)
def redeal_deck(s, rng):
    """Shuffle the face-down deck of ``s`` (its order is hidden, rule 13.1); everything
    else stays."""
    shuffle(rng, s.deck, np.int64(s.drawn), N_PATCHES)


@njit(cache=True)
def start_game(s, rng, start_buttons):
    """Overwrite ``s`` with a new game set up at random from ``rng`` (rule 13.1)."""
    _, first = draw_deck(rng, s.deck)
    set_up(s, first, start_buttons)


# ---------------------------------------------------------------------------------------
# Buyable patches, rule 13.2: affordable, and with a legal placement on the quilt (rule 5:
# a canonical orientation, inside the board, on empty cells only)


@njit(cache=True, inline="always")
def affordable(s, p, slot):
    """Rule 13.2: whether the face-up patch of ``slot`` costs at most ``p``'s buttons."""
    patch = s.row[slot]
    return patch >= 0 and PATCH_COST[patch] <= s.buttons[p]


@njit(cache=True, inline="always")
def fits_somewhere(patch, empty_lo, empty_hi):
    """Rule 13.2: whether ``patch`` has a legal placement on a quilt with these empty
    cells."""
    for e in range(ORIENT_START[patch], ORIENT_START[patch + 1]):
        lo, hi = free_anchors(e, empty_lo, empty_hi)
        if (lo | hi) != 0:
            return True
    return False


@njit(cache=True, inline="always")
def has_buyable(s, p):
    """Rule 13.2: whether player ``p`` has a buyable face-up patch."""
    empty_lo, empty_hi = empty_words(s, p)
    for slot in range(N_SLOTS):
        if affordable(s, p, slot) and fits_somewhere(s.row[slot], empty_lo, empty_hi):
            return True
    return False


@njit(cache=True, inline="always")
def can_buy_in_game(s, p):
    """Rule 13.7 (b): whether player ``p`` could buy some patch still in the game, face up
    or in the deck (the deck's contents are public). Costs are compared first; only an
    affordable patch is tested for fit."""
    if has_buyable(s, p):
        return True
    budget = s.buttons[p]
    empty_lo, empty_hi = empty_words(s, p)
    for k in range(s.drawn, N_PATCHES):
        patch = s.deck[k]
        if PATCH_COST[patch] <= budget and fits_somewhere(patch, empty_lo, empty_hi):
            return True
    return False


@njit(cache=True, inline="always")
def game_goes_on(s, o, p):
    """Rule 13.7 (b): whether the turn of player ``o`` (the other one is ``p``) is played:
    some player can still buy some patch in the game. Player ``o`` with a buyable face-up
    patch, the usual case, is the first thing checked."""
    return can_buy_in_game(s, o) or can_buy_in_game(s, p)


# ---------------------------------------------------------------------------------------
# The legal actions, rules 13.2, 13.6 and 13.9: every placement of a buyable patch; the
# three discards only when there is none


@njit(cache=True, inline="always")
def visit_legal(s, visit, acc):
    """Hand the legal actions of ``s`` to ``visit`` in increasing order, a block at a time
    (as :func:`~.kernels.visit_legal` does); returns the last ``acc``.

    A block ``(base, lo, hi)`` stands for the actions ``base + c`` of the set bits ``c``:
    the free anchors of one canonical orientation of an affordable patch (rule 13.2), or
    the three discards (rule 13.6) when no block of buys has a bit set.
    """
    if s.to_move < 0:
        return acc
    p = s.to_move
    empty_lo, empty_hi = empty_words(s, p)
    can_buy = False
    for slot in range(N_SLOTS):
        if not affordable(s, p, slot):
            continue
        patch = s.row[slot]
        for e in range(ORIENT_START[patch], ORIENT_START[patch + 1]):
            lo, hi = free_anchors(e, empty_lo, empty_hi)
            if (lo | hi) != 0:
                can_buy = True
                acc, stop = visit(acc, slot * SLOT_STRIDE + ORIENT_ID[e] * N_CELLS, lo, hi)
                if stop:
                    return acc
    if not can_buy:  # rule 13.6
        acc, _ = visit(acc, DISCARD_BASE, DISCARD_BLOCK, np.uint64(0))
    return acc


@njit(cache=True, inline="always")
def _write_block(row, base, lo, hi):
    """Visitor of :func:`visit_legal`: set the block's entries of a mask row."""
    if base == DISCARD_BASE:
        for k in range(N_SLOTS):
            row[base + k] = 1
    else:
        write_bitboard(row, base, lo, hi)
    return row, False


@njit(cache=True)
def write_legal_mask(s, row):
    """Write the legal mask of ``s`` into the byte row ``row`` (a bool row's bytes)."""
    row[:] = 0
    visit_legal(s, _write_block, row)


@njit(cache=True)
def check_action(s, a):
    """Why action ``a`` is illegal in ``s``, or ``OK`` (rules 13.2, 13.6, 13.9)."""
    if s.to_move < 0:
        return ERR_GAME_OVER
    if a < 0 or a >= N_DRAFT_ACTIONS:
        return ERR_OUT_OF_RANGE
    p = s.to_move
    if a >= DISCARD_BASE:
        return ERR_CAN_BUY if has_buyable(s, p) else OK
    patch = s.row[a // SLOT_STRIDE]
    code = a % SLOT_STRIDE
    if not PLACEMENT_LEGAL[patch, code]:
        return ERR_BAD_PLACEMENT
    if PATCH_COST[patch] > s.buttons[p]:
        return ERR_TOO_EXPENSIVE
    if not fits(s, p, PLACEMENT_MASKS[patch, code, 0], PLACEMENT_MASKS[patch, code, 1]):
        return ERR_OVERLAP
    return OK


# ---------------------------------------------------------------------------------------
# A turn, rules 13.2-13.7: buy (pay, place, score rows, columns and stars) or discard, then
# refill the slot; the game ends at the refill that finds the deck empty, or when no player
# can buy any patch still in the game; otherwise the other player moves


@njit(cache=True)
def apply_action(s, a, star_bits, star_lo, star_hi):
    """Play the legal action ``a`` in ``s`` (no checks)."""
    p = s.to_move
    if a >= DISCARD_BASE:  # rule 13.6: the patch leaves the game
        slot = a - DISCARD_BASE
    else:
        slot = a // SLOT_STRIDE
        _buy(s, p, slot, a % SLOT_STRIDE, star_bits, star_lo, star_hi)
    if s.drawn >= N_PATCHES:  # rule 13.7 (a): the refill finds the deck empty
        s.row[slot] = -1
        s.to_move = -1
        return
    s.row[slot] = s.deck[s.drawn]  # rule 13.3: the slot keeps its place
    s.drawn += 1
    o = 1 - p
    if game_goes_on(s, o, p):  # rule 13.3: turns alternate
        s.to_move = o
    else:  # rule 13.7 (b): nothing but discards could happen any more
        s.to_move = -1


@njit(cache=True, inline="always")
def _buy(s, p, slot, code, star_bits, star_lo, star_hi):
    """Rules 13.2, 13.4 and 13.5: pay for the patch of ``slot`` and sew it on as placement
    ``code`` says; score the rows and columns it completes and its star."""
    patch = s.row[slot]
    lo = PLACEMENT_MASKS[patch, code, 0]
    hi = PLACEMENT_MASKS[patch, code, 1]
    s.buttons[p] -= PATCH_COST[patch]
    s.quilt[p, 0] |= lo
    s.quilt[p, 1] |= hi
    fill_set_bits(s.cell_patches[p], lo, hi, patch)
    lines = completed_lines(s.quilt[p, 0], s.quilt[p, 1], lo, hi)
    s.points[p] += lines  # rule 13.4: a point and a bonus button per row or column
    s.buttons[p] += lines
    starred = (star_bits >> np.uint64(patch)) & ONE
    if starred != 0 and ((lo & star_lo) | (hi & star_hi)) != 0:  # rule 13.5: once per placement
        s.points[p] += 1


@njit(cache=True, inline="always")
def completed_lines(quilt_lo, quilt_hi, lo, hi):
    """Rule 13.4: the rows and columns full on the quilt ``quilt_lo, quilt_hi`` that the
    placement ``lo, hi`` (already on it) touches, so completes."""
    n = 0
    for k in range(LINE_MASKS.shape[0]):
        line_lo = LINE_MASKS[k, 0]
        line_hi = LINE_MASKS[k, 1]
        if ((lo & line_lo) | (hi & line_hi)) != 0 and covers(quilt_lo, quilt_hi, line_lo, line_hi):
            n += 1
    return n


# ---------------------------------------------------------------------------------------
# Score, rule 13.8: points + buttons; on a tie the player who moved second wins


@njit(cache=True)
def score(s, p):
    """Rule 13.8: row, column and star points plus buttons."""
    return np.int64(s.points[p]) + np.int64(s.buttons[p])


@njit(cache=True)
def winner(s):
    """Rule 13.8: the higher score; on a tie the second player."""
    a = score(s, 0)
    b = score(s, 1)
    if a > b:
        return 0
    if b > a:
        return 1
    return 1 - np.int64(s.first_player)
