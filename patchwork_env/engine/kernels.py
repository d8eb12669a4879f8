"""The rules of Patchwork, compiled: one game's state and everything a move does to it.

Each section cites the rules of docs/rules.md it implements. Every function works on one
record ``s`` of :data:`STATE_DTYPE`; the batch loops are in :mod:`.batch_kernels`, the bit
machinery in :mod:`.bits`. The rule arguments (``income_before``, ``leather_spaces``,
``bonus_squares``, ``track_end``, ...) come from :class:`~patchwork_env.data.tables.RuleTables`;
the patch tables are module constants, compiled in.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from patchwork_env.data.actions import (
    ADVANCE,
    LEATHER_BASE,
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
    PLACEMENT_MASKS,
)
from patchwork_env.engine.bits import (
    ONE,
    byte_of,
    covers,
    disjoint,
    fill_set_bits,
    popcount,
    random_below,
    shift_down,
    with_byte,
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
"""One game's complete state (rule 12.1 (docs/rules.md)); a batch is a 1-D array of these
records."""

# Why a step was refused (OK = 0: legal), rule 11.6 (docs/rules.md): the codes of
# batch_kernels.check_action, which engine/batch.py turns into messages.
(OK, ERR_GAME_OVER, ERR_OUT_OF_RANGE, ERR_LEATHER_PENDING, ERR_NO_LEATHER, ERR_NO_SLOT,
 ERR_BAD_PLACEMENT, ERR_TOO_EXPENSIVE, ERR_OVERLAP, ERR_CELL_TAKEN) = range(10)

# ---------------------------------------------------------------------------------------
# Reading a game: player p's quilt and the circle


@njit(cache=True, inline="always")
def empty_cells(s, p):
    """The number of empty cells of player ``p``'s quilt (rule 8.2 counts them)."""
    return N_CELLS - popcount(s.quilt[p, 0]) - popcount(s.quilt[p, 1])


@njit(cache=True, inline="always")
def empty_words(s, p):
    """The empty cells of player ``p``'s quilt as a two-word bitboard."""
    return ~s.quilt[p, 0], ~s.quilt[p, 1] & FULL_QUILT[1]


@njit(cache=True, inline="always")
def fits(s, p, lo, hi):
    """Rule 5.4: whether the cells ``lo, hi`` are all empty on player ``p``'s quilt."""
    return disjoint(s.quilt[p, 0], s.quilt[p, 1], lo, hi)


@njit(cache=True, inline="always")
def _is_full(s, p):
    """Whether player ``p``'s quilt has no empty cell (rule 6.8)."""
    return covers(s.quilt[p, 0], s.quilt[p, 1], FULL_QUILT[0], FULL_QUILT[1])


@njit(cache=True, inline="always")
def n_slots(s):
    """Rule 4.3: the slots a player may buy from (N_SLOTS, fewer near the end)."""
    return min(N_SLOTS, np.int64(s.circle_len))


# ---------------------------------------------------------------------------------------
# Setup, rules 2.1-2.3 (docs/rules.md): the circle in random order with patch 0 last,
# empty quilts, the start buttons, both tokens on space 0, a random starting player


@njit(cache=True, inline="always")
def draw_setup(rng, first_patch, circle):
    """Rules 2.1 and 2.3: fill ``circle`` with every patch id, ``first_patch`` last and the
    others shuffled (Fisher-Yates); returns ``(rng, starting player)``."""
    n_ids = circle.shape[0]
    m = 0
    for patch in range(n_ids):
        if patch != first_patch:
            circle[m] = patch
            m += 1
    for j in range(n_ids - 2, 0, -1):
        rng, k = random_below(rng, j + 1)
        circle[j], circle[k] = circle[k], circle[j]
    circle[n_ids - 1] = first_patch
    return random_below(rng, 2)


@njit(cache=True, inline="always")
def clear_game(s, start_buttons):
    """Rule 2.2: ``s`` as before the first move, but for its circle and first player."""
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
# Whose turn, rules 3.1-3.4 (docs/rules.md): the token further behind; on a shared space
# the one that arrived last; the winner of a leather patch until it is placed


@njit(cache=True, inline="always")
def _settle_turn(s, p, track_end):
    """Whose turn it is once player ``p`` has finished moving (-1 when both are at the end)."""
    if s.pending_leather > 0:  # rule 3.3
        s.to_move = p
        return
    o = 1 - p
    if s.position[p] >= track_end and s.position[o] >= track_end:  # rule 3.4
        s.to_move = -1
    elif s.position[p] > s.position[o]:  # rule 3.1
        s.to_move = o
    else:  # behind (rule 3.1), or on the same space having arrived last (rule 3.2)
        s.to_move = p


# ---------------------------------------------------------------------------------------
# The legal actions, rule 11.5 (docs/rules.md): a pending leather patch on an empty cell
# (rule 6.7); otherwise the buys of an affordable patch of a slot (rules 4.3, 4.4), in a
# canonical orientation (rule 5.2), inside the board (rule 5.3), on empty cells (rule 5.4),
# then advance (rule 4.2)


@njit(cache=True, inline="always")
def buyable_patch(s, p, slot):
    """Rules 4.3 and 4.4: the patch id in ``slot`` if the player can afford it, else -1."""
    if slot >= n_slots(s):
        return -1
    patch = np.int64(s.circle[slot])
    return patch if PATCH_COST[patch] <= s.buttons[p] else -1


@njit(cache=True, inline="always")
def free_anchors(e, empty_lo, empty_hi):
    """Rules 5.3 and 5.4: the bitboard of the anchors where canonical orientation entry
    ``e`` lies inside the board on empty cells only."""
    lo = ORIENT_ANCHORS[e, 0]
    hi = ORIENT_ANCHORS[e, 1]
    for k in range(ORIENT_SIZE[e]):
        a, b = shift_down(empty_lo, empty_hi, ORIENT_OFFSETS[e, k])
        lo &= a
        hi &= b
    return lo, hi


@njit(cache=True, inline="always")
def visit_legal(s, visit, acc):
    """Rule 11.5: hand the legal actions of ``s`` to ``visit`` in increasing order, a block
    at a time; returns the last ``acc``. The mask, the list and the random draw all use it.

    A block ``(base, lo, hi)`` stands for the actions ``base + c`` of the set cells ``c``
    of its bitboard: the free anchors of one canonical orientation of a buyable patch, the
    empty cells for a leather patch, cell 0 at ``ADVANCE`` for advance.
    ``visit(acc, base, lo, hi)`` returns ``(acc, stop)``; a true ``stop`` ends the walk.
    """
    if s.to_move < 0:
        return acc
    p = s.to_move
    empty_lo, empty_hi = empty_words(s, p)
    if s.pending_leather > 0:  # rule 6.7: nothing else until it is placed
        acc, _ = visit(acc, LEATHER_BASE, empty_lo, empty_hi)
        return acc
    for slot in range(N_SLOTS):
        patch = buyable_patch(s, p, slot)
        if patch < 0:
            continue
        for e in range(ORIENT_START[patch], ORIENT_START[patch + 1]):  # rule 5.2
            lo, hi = free_anchors(e, empty_lo, empty_hi)
            acc, stop = visit(acc, slot * SLOT_STRIDE + ORIENT_ID[e] * N_CELLS, lo, hi)
            if stop:
                return acc
    acc, _ = visit(acc, ADVANCE, ONE, np.uint64(0))  # rule 4.2: always legal
    return acc


@njit(cache=True, inline="always")
def _write_block(row, base, lo, hi):
    """Visitor of :func:`visit_legal`: set the block's entries of a mask row."""
    if base == ADVANCE:  # a single entry: one byte, not a block of 81
        row[base] = 1
    else:
        write_bitboard(row, base, lo, hi)
    return row, False


@njit(cache=True)
def write_legal_mask(s, row):
    """Write the legal mask of game ``s`` (rule 11.5) into the byte row ``row`` (a bool
    row's bytes): each block of :func:`visit_legal` writes its 81 entries from its
    bitboard; everything else stays cleared."""
    row[:] = 0
    visit_legal(s, _write_block, row)


# ---------------------------------------------------------------------------------------
# A turn, played, section 4 (docs/rules.md): advance (rule 4.2), or buy: pay (rule 4.5),
# sew the patch on (section 5), move the neutral token (rule 4.6), move (rule 4.7)


@njit(cache=True)
def apply_action(s, a, income_before, leather_spaces, bonus_squares, track_end):
    """Rule 4.1: play the legal action ``a`` in game ``s`` (no checks)."""
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
    """Rule 4.2: to the space in front of the opponent (at most the end), 1 button per
    space moved."""
    target = min(np.int64(s.position[1 - p]) + 1, track_end)
    s.buttons[p] += target - s.position[p]
    _move_token(s, p, target, income_before, leather_spaces, track_end)


@njit(cache=True, inline="always")
def _buy(s, p, slot, code, income_before, leather_spaces, bonus_squares, track_end):
    """Rules 4.5-4.7: pay for the patch in ``slot`` and take on its income, sew it on as
    placement ``code`` says, move the neutral token onto its place, then move the token by
    the patch's time."""
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
    """Rule 4.6: the neutral token moves to the bought patch's place, so the circle now
    starts after it; the patches of the slots before it go to the end of the circle, in
    order."""
    n = np.int64(s.circle_len)
    passed = np.uint64(0)  # their ids, a byte each (N_SLOTS - 1 <= 8 of them)
    for k in range(N_SLOTS - 1):  # a constant count, so unrolled
        if k < slot:
            passed = with_byte(passed, k, s.circle[k])
    rest = n - slot - 1
    for k in range(rest):
        s.circle[k] = s.circle[k + slot + 1]
    for k in range(N_SLOTS - 1):
        if k < slot:
            s.circle[rest + k] = byte_of(passed, k)
    s.circle[n - 1] = -1
    s.circle_len = n - 1


# ---------------------------------------------------------------------------------------
# The time track, section 6 (docs/rules.md): a token never passes the end (rule 6.1),
# income spaces pay the income (rule 6.4), leather spaces the opponent has not reached
# give a leather patch (rule 6.6) unless the quilt is full (rule 6.8), placed at once
# (rule 6.7); who reaches the end first is recorded (rule 6.9)


@njit(cache=True, inline="always")
def _move_token(s, p, target, income_before, leather_spaces, track_end):
    """Player ``p``'s token to ``target`` (at most the end), with what it crosses."""
    o = 1 - p
    old = np.int64(s.position[p])
    s.position[p] = target
    s.buttons[p] += (income_before[target] - income_before[old]) * s.income[p]  # rule 6.4
    for x in leather_spaces:  # rules 6.6 and 6.8
        if old < x <= target and x > s.position[o] and not _is_full(s, p):
            s.pending_leather += 1
    if target >= track_end and s.first_to_finish < 0:  # rule 6.9
        s.first_to_finish = p
    _settle_turn(s, p, track_end)


@njit(cache=True, inline="always")
def _place_leather(s, p, cell, bonus_squares, track_end):
    """Rules 6.7 and 6.8: a leather patch won on the track, placed on ``cell`` before
    anything else happens; the ones left once the quilt is full are discarded."""
    _place(s, p, CELL_MASKS[cell, 0], CELL_MASKS[cell, 1], LEATHER_ID, bonus_squares)
    s.pending_leather -= 1
    if s.pending_leather > 0 and _is_full(s, p):
        s.pending_leather = 0
    _settle_turn(s, p, track_end)


# ---------------------------------------------------------------------------------------
# Sewing a patch on (section 5) and the 7x7 bonus, rules 7.1-7.3 (docs/rules.md): checked
# after every placement; the first player with a fully covered square takes the one tile


@njit(cache=True, inline="always")
def _place(s, p, lo, hi, patch_id, bonus_squares):
    """Sew the cells ``lo, hi`` of patch ``patch_id`` onto ``p``'s quilt, then check the
    bonus (rules 7.1-7.3)."""
    s.quilt[p, 0] |= lo
    s.quilt[p, 1] |= hi
    fill_set_bits(s.cell_patches[p], lo, hi, patch_id)
    if s.bonus_owner < 0:  # rule 7.3: one tile, never lost
        for k in range(bonus_squares.shape[0]):
            if covers(s.quilt[p, 0], s.quilt[p, 1], bonus_squares[k, 0], bonus_squares[k, 1]):
                s.bonus_owner = p
                break


# ---------------------------------------------------------------------------------------
# End and score, rules 8.2-8.4 (docs/rules.md): buttons - 2 per empty cell + the bonus
# tile; ties go to who reached the end first


@njit(cache=True)
def score(s, p, bonus_points):
    """Rule 8.2: buttons minus two per empty cell plus the bonus tile."""
    bonus = bonus_points if s.bonus_owner == p else 0
    return np.int64(s.buttons[p]) - 2 * empty_cells(s, p) + bonus


@njit(cache=True)
def winner(s, bonus_points):
    """Rules 8.3 and 8.4: the winning player of a finished game, the higher score, then
    who reached the end first."""
    a = score(s, 0, bonus_points)
    b = score(s, 1, bonus_points)
    if a > b:
        return 0
    if b > a:
        return 1
    return np.int64(s.first_to_finish)

