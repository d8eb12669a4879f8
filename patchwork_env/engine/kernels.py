"""The rules of Patchwork, compiled: one game's state and everything a move does to it.

The sections follow the rules document: Setup, Whose turn, A turn (its legal actions,
then advance and buy), While moving (income, leather patches), the bonus square, End and
score. Every function works on one record ``s`` of :data:`STATE_DTYPE`; the loops over
a batch (and uniform random play) are in :mod:`.batch_kernels`, the bit and byte
machinery in :mod:`.bits`.

The rule arguments ``income_before, leather_spaces, bonus_squares, track_end,
bonus_points, start_buttons`` come from :class:`patchwork_env.data.tables.RuleTables`; the
patch tables are module constants and compiled in.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from patchwork_env.data.actions import (
    ADVANCE,
    LEATHER_BASE,
    N_ACTIONS,
    N_CELLS,
    N_SLOTS,
    SLOT_STRIDE,
)
from patchwork_env.data.patches import LEATHER_ID, N_PATCHES
from patchwork_env.data.tables import (
    CELL_MASKS,
    FULL_QUILT,
    ORIENT_ANCHORS,
    ORIENT_ID,
    ORIENT_OFFSETS,
    ORIENT_SIZE,
    ORIENT_START,
    PATCH_COST,
    PATCH_INCOME,
    PATCH_TIME,
    PLACEMENT_LEGAL,
    PLACEMENT_MASKS,
)
from patchwork_env.engine.bits import (
    bit_index,
    lowest_bit,
    popcount,
    random_below,
    shift_down,
    write_bitboard,
)

STATE_DTYPE = np.dtype(
    [
        ("quilt", np.uint64, (2, 2)),  # [player, word] bitboards
        ("cell_patches", np.int8, (2, N_CELLS)),  # patch id on each cell, -1 empty, 33 leather
        ("buttons", np.int16, (2,)),
        ("position", np.int8, (2,)),
        ("income", np.int8, (2,)),
        ("circle", np.int8, (N_PATCHES,)),  # ids clockwise from the neutral token, -1 padded
        ("circle_len", np.int8),
        ("to_move", np.int8),  # -1 once the game is over
        ("pending_leather", np.int8),  # leather patches the player to move must place
        ("bonus_owner", np.int8),
        ("first_to_finish", np.int8),
    ],
    align=True,
)
"""One game's complete state; a batch is a 1-D array of these records."""

# Why a step was refused (OK = 0: legal); engine.py turns these into messages.
(OK, ERR_GAME_OVER, ERR_OUT_OF_RANGE, ERR_LEATHER_PENDING, ERR_NO_LEATHER, ERR_NO_SLOT,
 ERR_BAD_PLACEMENT, ERR_TOO_EXPENSIVE, ERR_OVERLAP, ERR_CELL_TAKEN) = range(10)

# ---------------------------------------------------------------------------------------
# Reading a game: player p's quilt and the circle


@njit(cache=True, inline="always")
def empty_cells(s, p):
    """The empty cells of player ``p``'s quilt."""
    return N_CELLS - popcount(s.quilt[p, 0]) - popcount(s.quilt[p, 1])


@njit(cache=True, inline="always")
def empty_words(s, p):
    """The empty cells of player ``p``'s quilt as a two-word bitboard."""
    return ~s.quilt[p, 0], ~s.quilt[p, 1] & FULL_QUILT[1]


@njit(cache=True, inline="always")
def _fits(s, p, lo, hi):
    """Whether the cells ``lo, hi`` are all empty on player ``p``'s quilt."""
    return (s.quilt[p, 0] & lo) == 0 and (s.quilt[p, 1] & hi) == 0


@njit(cache=True, inline="always")
def _is_full(s, p):
    return s.quilt[p, 0] == FULL_QUILT[0] and s.quilt[p, 1] == FULL_QUILT[1]


@njit(cache=True, inline="always")
def _n_slots(s):
    """Slots a player may buy from: the next N_SLOTS patches, fewer near the end."""
    return min(N_SLOTS, np.int64(s.circle_len))


# ---------------------------------------------------------------------------------------
# Setup: the circle in random order with patch 0 last, empty quilts, the start buttons,
# both tokens on space 0, a random starting player


@njit(cache=True, inline="always")
def draw_setup(rng, first_patch, circle):
    """Fill ``circle`` with every patch id, ``first_patch`` last and the others shuffled
    (Fisher-Yates); returns ``(rng, starting player)``."""
    n_ids = circle.shape[0]
    m = 0
    for patch in range(n_ids):
        if patch != first_patch:
            circle[m] = patch
            m += 1
    for j in range(n_ids - 2, 0, -1):
        rng, k = random_below(rng, j + 1)
        t = circle[j]
        circle[j] = circle[k]
        circle[k] = t
    circle[n_ids - 1] = first_patch
    return random_below(rng, 2)


@njit(cache=True, inline="always")
def clear_game(s, start_buttons):
    """Make ``s`` a game before its first move, except for its circle and first player."""
    s.quilt[:, :] = 0
    s.cell_patches[:, :] = -1
    s.buttons[:] = start_buttons
    s.position[:] = 0
    s.income[:] = 0
    s.circle_len = s.circle.shape[0]
    s.pending_leather = 0
    s.bonus_owner = -1
    s.first_to_finish = -1


@njit(cache=True, inline="always")
def start_game(s, rng, first_patch, start_buttons):
    """Overwrite ``s`` with a new game set up at random from ``rng``."""
    clear_game(s, start_buttons)
    _, s.to_move = draw_setup(rng, first_patch, s.circle)


# ---------------------------------------------------------------------------------------
# Whose turn: the token further behind; on a shared space the one that arrived last


@njit(cache=True, inline="always")
def _settle_turn(s, p, track_end):
    """Whose turn it is once player ``p`` has finished moving (-1 when both are at the end)."""
    if s.pending_leather > 0:  # a leather patch won is placed before anything else
        s.to_move = p
        return
    o = 1 - p
    if s.position[p] >= track_end and s.position[o] >= track_end:
        s.to_move = -1
    elif s.position[p] > s.position[o]:
        s.to_move = o
    else:  # behind, or on the same space having arrived last
        s.to_move = p


# ---------------------------------------------------------------------------------------
# A turn, its legal actions: a pending leather patch on an empty cell; otherwise advance
# and the buys of an affordable patch of a slot, canonical orientation, inside the board,
# on empty cells


@njit(cache=True)
def check_action(s, a):
    """Why action ``a`` is illegal in game ``s``, or ``OK``."""
    if s.to_move < 0:
        return ERR_GAME_OVER
    if a < 0 or a >= N_ACTIONS:
        return ERR_OUT_OF_RANGE
    p = s.to_move
    if a >= LEATHER_BASE:
        if s.pending_leather == 0:
            return ERR_NO_LEATHER
        if not _fits(s, p, CELL_MASKS[a - LEATHER_BASE, 0], CELL_MASKS[a - LEATHER_BASE, 1]):
            return ERR_CELL_TAKEN
        return OK
    if s.pending_leather > 0:
        return ERR_LEATHER_PENDING
    if a == ADVANCE:
        return OK
    slot = a // SLOT_STRIDE
    code = a % SLOT_STRIDE
    if slot >= _n_slots(s):
        return ERR_NO_SLOT
    patch = s.circle[slot]
    if not PLACEMENT_LEGAL[patch, code]:
        return ERR_BAD_PLACEMENT
    if PATCH_COST[patch] > s.buttons[p]:
        return ERR_TOO_EXPENSIVE
    if not _fits(s, p, PLACEMENT_MASKS[patch, code, 0], PLACEMENT_MASKS[patch, code, 1]):
        return ERR_OVERLAP
    return OK


@njit(cache=True, inline="always")
def buyable_patch(s, p, slot):
    """The patch id in ``slot`` if the player can afford it, else -1."""
    if slot >= _n_slots(s):
        return -1
    patch = np.int64(s.circle[slot])
    return patch if PATCH_COST[patch] <= s.buttons[p] else -1


@njit(cache=True, inline="always")
def free_anchors(e, empty_lo, empty_hi):
    """Bitboard of the anchors where canonical orientation entry ``e`` lies inside the
    board on empty cells only."""
    lo = ORIENT_ANCHORS[e, 0]
    hi = ORIENT_ANCHORS[e, 1]
    for k in range(ORIENT_SIZE[e]):
        a, b = shift_down(empty_lo, empty_hi, ORIENT_OFFSETS[e, k])
        lo &= a
        hi &= b
    return lo, hi


@njit(cache=True)
def write_legal_mask(s, row):
    """Write the legal mask of game ``s`` into the byte row ``row`` (a bool row's bytes).

    Every canonical orientation of a buyable patch writes its whole 81-entry block from
    the bitboard of its free anchors; everything else stays cleared.
    """
    row[:] = 0
    if s.to_move < 0:
        return
    p = s.to_move
    empty_lo, empty_hi = empty_words(s, p)
    if s.pending_leather > 0:
        write_bitboard(row, LEATHER_BASE, empty_lo, empty_hi)
        return
    for slot in range(N_SLOTS):
        patch = buyable_patch(s, p, slot)
        if patch < 0:
            continue
        for e in range(ORIENT_START[patch], ORIENT_START[patch + 1]):
            lo, hi = free_anchors(e, empty_lo, empty_hi)
            write_bitboard(row, slot * SLOT_STRIDE + ORIENT_ID[e] * N_CELLS, lo, hi)
    row[ADVANCE] = 1


# ---------------------------------------------------------------------------------------
# A turn, played: A. advance, B. buy (pay, move the neutral token, place, move)


@njit(cache=True)
def apply_action(s, a, income_before, leather_spaces, bonus_squares, track_end):
    """Play the legal action ``a`` in game ``s`` (no checks)."""
    p = s.to_move
    if a >= LEATHER_BASE:
        _place_leather(s, p, a - LEATHER_BASE, bonus_squares, track_end)
    elif a == ADVANCE:
        _advance(s, p, income_before, leather_spaces, track_end)
    else:
        _buy(s, p, a // SLOT_STRIDE, a % SLOT_STRIDE, income_before, leather_spaces,
             bonus_squares, track_end)


@njit(cache=True, inline="always")
def _advance(s, p, income_before, leather_spaces, track_end):
    """A: to the space in front of the opponent (at most the end), 1 button per space."""
    target = min(np.int64(s.position[1 - p]) + 1, track_end)
    s.buttons[p] += target - s.position[p]
    _move_token(s, p, target, income_before, leather_spaces, track_end)


@njit(cache=True, inline="always")
def _buy(s, p, slot, code, income_before, leather_spaces, bonus_squares, track_end):
    """B: pay for the patch in ``slot``, move the neutral token onto it, place it as
    placement ``code`` says, then move the token by the patch's time."""
    patch = s.circle[slot]
    s.buttons[p] -= PATCH_COST[patch]
    s.income[p] += PATCH_INCOME[patch]
    _place(s, p, PLACEMENT_MASKS[patch, code, 0], PLACEMENT_MASKS[patch, code, 1], patch,
           bonus_squares)
    _move_neutral_token(s, slot)
    target = min(np.int64(s.position[p]) + PATCH_TIME[patch], track_end)
    _move_token(s, p, target, income_before, leather_spaces, track_end)


@njit(cache=True, inline="always")
def _move_neutral_token(s, slot):
    """B.2: the neutral token moves to the bought patch's place, so the circle now starts
    after it; the patches of the slots before it go to the end of the circle, in order."""
    n = np.int64(s.circle_len)
    passed = np.uint64(0)  # their ids, a byte each (N_SLOTS - 1 <= 8 of them)
    for k in range(N_SLOTS - 1):  # a constant count, so unrolled
        if k < slot:
            passed |= np.uint64(s.circle[k]) << np.uint64(8 * k)
    rest = n - slot - 1
    for k in range(rest):
        s.circle[k] = s.circle[k + slot + 1]
    for k in range(N_SLOTS - 1):
        if k < slot:
            s.circle[rest + k] = (passed >> np.uint64(8 * k)) & np.uint64(0xFF)
    s.circle[n - 1] = -1
    s.circle_len = n - 1


# ---------------------------------------------------------------------------------------
# While moving: income spaces pay the income, leather spaces not yet passed by the
# opponent give a leather patch, a token never passes the end


@njit(cache=True, inline="always")
def _move_token(s, p, target, income_before, leather_spaces, track_end):
    """Player ``p``'s token to ``target`` (at most the end), with what it crosses."""
    o = 1 - p
    old = np.int64(s.position[p])
    s.position[p] = target
    s.buttons[p] += (income_before[target] - income_before[old]) * s.income[p]
    for x in leather_spaces:
        if old < x <= target and x > s.position[o] and not _is_full(s, p):
            s.pending_leather += 1
    if target >= track_end and s.first_to_finish < 0:
        s.first_to_finish = p
    _settle_turn(s, p, track_end)


@njit(cache=True, inline="always")
def _place_leather(s, p, cell, bonus_squares, track_end):
    """A leather patch won on the track, placed on ``cell`` before anything else happens;
    the ones left once the quilt is full are discarded."""
    _place(s, p, CELL_MASKS[cell, 0], CELL_MASKS[cell, 1], LEATHER_ID, bonus_squares)
    s.pending_leather -= 1
    if s.pending_leather > 0 and _is_full(s, p):
        s.pending_leather = 0
    _settle_turn(s, p, track_end)


# ---------------------------------------------------------------------------------------
# The bonus square (the rules' "7x7 bonus"): checked after every placement; the first
# player with a fully covered square takes the one tile


@njit(cache=True, inline="always")
def _place(s, p, lo, hi, patch_id, bonus_squares):
    """Sew the cells ``lo, hi`` of patch ``patch_id`` onto ``p``'s quilt, then check the
    bonus."""
    s.quilt[p, 0] |= lo
    s.quilt[p, 1] |= hi
    for w in range(2):
        bits = hi if w else lo
        while bits:
            low = lowest_bit(bits)
            s.cell_patches[p, w * 64 + bit_index(low)] = patch_id
            bits ^= low
    if s.bonus_owner < 0:
        for k in range(bonus_squares.shape[0]):
            m0 = bonus_squares[k, 0]
            m1 = bonus_squares[k, 1]
            if (s.quilt[p, 0] & m0) == m0 and (s.quilt[p, 1] & m1) == m1:
                s.bonus_owner = p
                break


# ---------------------------------------------------------------------------------------
# End and score: buttons - 2 per empty cell + the bonus tile; ties go to who finished first


@njit(cache=True)
def score(s, p, bonus_points):
    """Buttons minus two per empty cell plus the bonus tile."""
    bonus = bonus_points if s.bonus_owner == p else 0
    return np.int64(s.buttons[p]) - 2 * empty_cells(s, p) + bonus


@njit(cache=True)
def winner(s, bonus_points):
    """The winning player of a finished game: higher score, then who finished first."""
    a = score(s, 0, bonus_points)
    b = score(s, 1, bonus_points)
    if a > b:
        return 0
    if b > a:
        return 1
    return np.int64(s.first_to_finish)

