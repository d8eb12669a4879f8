"""Compiled rules: the per-game operations the batch engine runs over its state array.

Every function here works on one record of :data:`STATE_DTYPE` (one game) or loops over a
whole state array. The ``*_kernel`` functions are compiled twice by :mod:`.engine`, once
serial and once multi-threaded; everything else is a helper inlined into them.

The rule arguments ``income_before, leather_spaces, bonus_squares, track_end,
bonus_points`` come from :class:`patchwork_env.tables.RuleTables`; the patch tables are
module constants and compiled in.
"""

from __future__ import annotations

import types
from typing import Any

import numba
import numpy as np
from llvmlite import ir
from numba import njit, prange
from numba import types as nb_types
from numba.core import cgutils
from numba.core.extending import intrinsic

from .actions import ADVANCE, LEATHER_BASE, N_ACTIONS, N_CELLS, SLOT_STRIDE
from .patches import LEATHER_ID, N_PATCHES
from .tables import (
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

# Why a step was refused (0 = legal); engine.py turns these into messages.
OK = 0
ERR_GAME_OVER = 1
ERR_OUT_OF_RANGE = 2
ERR_LEATHER_PENDING = 3
ERR_NO_LEATHER = 4
ERR_NO_SLOT = 5
ERR_BAD_PLACEMENT = 6
ERR_TOO_EXPENSIVE = 7
ERR_OVERLAP = 8
ERR_CELL_TAKEN = 9

_U1 = np.uint64(1)
_U64 = np.uint64(64)
_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_BYTE = np.uint64(0xFF)
_SPREAD = np.uint64(0x8040201008040201)  # byte k keeps bit k
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_HIGH = np.uint64(0x8080808080808080)
_LANES = np.uint64(0x00FF00FF00FF00FF)
_H16 = np.uint64(0x0001000100010001)

# ---------------------------------------------------------------------------------------
# bit tricks and a tiny counter-based random generator (splitmix64)


@njit(cache=True, inline="always")
def popcount(x):
    x = x - ((x >> np.uint64(1)) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


@njit(cache=True, inline="always")
def _next_random(rng):
    """Advance a splitmix64 state; returns ``(new_state, 64 random bits)``."""
    rng = rng + _GOLDEN
    z = rng
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return rng, z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _random_below(rng, n):
    """``(new_state, k)`` with ``k`` uniform in ``0..n-1`` (bias below 2**-40)."""
    rng, bits = _next_random(rng)
    return rng, np.int64(((bits >> np.uint64(11)) * np.uint64(n)) >> np.uint64(53))


@njit(cache=True, inline="always")
def row_seed(seed, row):
    """The generator state of one row for a call seeded with ``seed``."""
    _, bits = _next_random(np.uint64(seed) ^ (np.uint64(row) * _MIX2))
    return bits


# ---------------------------------------------------------------------------------------
# reading a game


@njit(cache=True, inline="always")
def empty_cells(s, p):
    return N_CELLS - popcount(s.quilt[p, 0]) - popcount(s.quilt[p, 1])


@njit(cache=True, inline="always")
def _fits(s, p, lo, hi):
    return (s.quilt[p, 0] & lo) == 0 and (s.quilt[p, 1] & hi) == 0


@njit(cache=True, inline="always")
def _is_full(s, p):
    return s.quilt[p, 0] == FULL_QUILT[0] and s.quilt[p, 1] == FULL_QUILT[1]


@njit(cache=True, inline="always")
def _cell_empty(s, p, cell):
    return (s.quilt[p, 0] & CELL_MASKS[cell, 0]) == 0 and (s.quilt[p, 1] & CELL_MASKS[cell, 1]) == 0


@njit(cache=True, inline="always")
def _n_slots(s):
    return min(3, np.int64(s.circle_len))


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


# ---------------------------------------------------------------------------------------
# legality


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
        if not _cell_empty(s, p, a - LEATHER_BASE):
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
def _shift_down(lo, hi, d):
    """The 81-cell bitboard shifted so that bit ``a`` holds former bit ``a + d``,
    ``0 <= d < 64``.

    No branches (the legal-mask kernels shift by every cell offset of every shape): the
    high word goes down by 1 then by ``63 - d``, which stays defined, and gives 0, at d = 0.
    """
    d = np.uint64(d)
    return (lo >> d) | ((hi << _U1) << (np.uint64(63) - d)), hi >> d


@njit(cache=True, inline="always")
def _free_anchors(e, empty_lo, empty_hi):
    """Bitboard of the anchors where canonical orientation entry ``e`` fits."""
    lo = ORIENT_ANCHORS[e, 0]
    hi = ORIENT_ANCHORS[e, 1]
    for k in range(ORIENT_SIZE[e]):
        a, b = _shift_down(empty_lo, empty_hi, ORIENT_OFFSETS[e, k])
        lo &= a
        hi &= b
    return lo, hi


@njit(cache=True, inline="always")
def _empty_words(s, p):
    return ~s.quilt[p, 0], ~s.quilt[p, 1] & FULL_QUILT[1]


@njit(cache=True, inline="always")
def _buyable_patch(s, p, slot):
    """The patch id in ``slot`` if the player can afford it, else -1."""
    if slot >= _n_slots(s):
        return -1
    patch = np.int64(s.circle[slot])
    return patch if PATCH_COST[patch] <= s.buttons[p] else -1


@njit(cache=True)
def enumerate_legal(s, out):
    """Write the legal actions of ``s`` in increasing order to ``out``; return how many."""
    n = 0
    if s.to_move < 0:
        return 0
    p = s.to_move
    if s.pending_leather > 0:
        for cell in range(N_CELLS):
            if _cell_empty(s, p, cell):
                out[n] = LEATHER_BASE + cell
                n += 1
        return n
    empty_lo, empty_hi = _empty_words(s, p)
    for slot in range(3):
        patch = _buyable_patch(s, p, slot)
        if patch < 0:
            continue
        for e in range(ORIENT_START[patch], ORIENT_START[patch + 1]):
            base = slot * SLOT_STRIDE + ORIENT_ID[e] * N_CELLS
            lo, hi = _free_anchors(e, empty_lo, empty_hi)
            for w in range(2):
                bits = hi if w else lo
                while bits:
                    low = bits & (~bits + _U1)
                    out[n] = base + w * 64 + popcount(low - _U1)
                    n += 1
                    bits ^= low
    out[n] = ADVANCE
    return n + 1


def _pointer(context: Any, builder: Any, row_type: Any, row: Any, offset: Any,
             bits: int = 64) -> Any:
    """LLVM pointer to the ``bits``-bit integer at byte ``offset`` of the byte array
    ``row``."""
    data = context.make_array(row_type)(context, builder, row).data
    return builder.bitcast(builder.gep(data, [offset]), ir.IntType(bits).as_pointer())


@intrinsic
def _store_u64(typingctx, row, offset, value):
    """Store the ``uint64`` ``value`` at byte ``offset`` of the byte array ``row``.

    An unaligned 8-byte store: mask blocks start at any byte, and a numpy view per store
    would cost more than the store itself.
    """

    def codegen(context, builder, signature, args):
        row_v, offset_v, value_v = args
        target = _pointer(context, builder, signature.args[0], row_v, offset_v)
        builder.store(value_v, target).align = 1
        return context.get_dummy_value()

    return nb_types.void(row, offset, value), codegen


@intrinsic
def _load_u64(typingctx, row, offset):
    """The ``uint64`` at byte ``offset`` of the byte array ``row`` (an unaligned load)."""

    def codegen(context, builder, signature, args):
        row_v, offset_v = args
        value = builder.load(_pointer(context, builder, signature.args[0], row_v, offset_v))
        value.align = 1
        return value

    return nb_types.uint64(row, offset), codegen


def _prefetch_intrinsic(write: bool) -> Any:
    """An intrinsic ``(row, offset)`` that asks the CPU to fetch the cache line holding byte
    ``offset`` of the array ``row`` (for writing or for reading)."""

    @intrinsic
    def prefetch(typingctx, row, offset):
        def codegen(context, builder, signature, args):
            row_v, offset_v = args
            target = _pointer(context, builder, signature.args[0], row_v, offset_v, bits=8)
            i32 = ir.IntType(32)
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [target.type, i32, i32, i32]),
                "llvm.prefetch.p0")
            # (address, 1 = write / 0 = read, locality 3 = keep in all levels, data cache)
            builder.call(fn, [target, ir.Constant(i32, int(write)), ir.Constant(i32, 3),
                              ir.Constant(i32, 1)])
            return context.get_dummy_value()

        return nb_types.void(row, offset), codegen

    return prefetch


_prefetch_for_write = _prefetch_intrinsic(write=True)
_prefetch_for_read = _prefetch_intrinsic(write=False)

_PREFETCH_AHEAD = 4
"""Mask rows ahead of the one being written or read whose cache lines are requested early:
a batch's mask outgrows the caches from about a thousand games, and waiting for each
row's lines in turn cost a quarter of the mask's time."""


@njit(cache=True, inline="always")
def _prefetch_row(rows, i, write):
    """Request the cache lines of row ``i`` of the 2-D byte array ``rows``, if it exists."""
    if i < rows.shape[0]:
        row = rows[i]
        for offset in range(0, row.shape[0], 64):
            if write:
                _prefetch_for_write(row, offset)
            else:
                _prefetch_for_read(row, offset)


@njit(cache=True, inline="always")
def _byte_to_bools(b):
    """The 8 bits of the byte ``b`` as 8 bytes of 0 or 1, bit 0 in the lowest byte."""
    return ((((b * _H01) & _SPREAD) + _LOW7) & _HIGH) >> np.uint64(7)


@njit(cache=True, inline="always")
def _write_anchors(row, base, lo, hi):
    """``row[base + a] = bit a`` of an 81-cell bitboard, eight cells per store, no branches."""
    for j in range(8):
        _store_u64(row, base + 8 * j, _byte_to_bools((lo >> np.uint64(8 * j)) & _BYTE))
    _store_u64(row, base + 64, _byte_to_bools(hi & _BYTE))
    _store_u64(row, base + 72, _byte_to_bools((hi >> np.uint64(8)) & _BYTE))
    row[base + 80] = (hi >> np.uint64(16)) & _U1


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
    empty_lo, empty_hi = _empty_words(s, p)
    if s.pending_leather > 0:
        _write_anchors(row, LEATHER_BASE, empty_lo, empty_hi)
        return
    for slot in range(3):
        patch = _buyable_patch(s, p, slot)
        if patch < 0:
            continue
        for e in range(ORIENT_START[patch], ORIENT_START[patch + 1]):
            lo, hi = _free_anchors(e, empty_lo, empty_hi)
            _write_anchors(row, slot * SLOT_STRIDE + ORIENT_ID[e] * N_CELLS, lo, hi)
    row[ADVANCE] = 1


@njit(cache=True, inline="always")
def _kth_bit(lo, hi, k):
    """Index of the ``k``-th (from 0) set bit of a two-word bitboard."""
    c = popcount(lo)
    if k >= c:
        k -= c
        lo = hi
        offset = 64
    else:
        offset = 0
    for _ in range(k):
        lo &= lo - _U1
    return offset + popcount((lo & (~lo + _U1)) - _U1)


@njit(cache=True)
def random_legal_action(s, rng):
    """``(new_rng, action)``: an action drawn uniformly from the legal ones, -1 if over.

    Counts the free anchors of every orientation of the buyable patches (a few word
    operations each), draws one legal action among them and advance, then finds it.
    """
    if s.to_move < 0:
        return rng, -1
    p = s.to_move
    if s.pending_leather > 0:
        rng, k = _random_below(rng, empty_cells(s, p))
        empty_lo, empty_hi = _empty_words(s, p)
        return rng, LEATHER_BASE + _kth_bit(empty_lo, empty_hi, k)
    empty_lo, empty_hi = _empty_words(s, p)
    total = 1  # advance
    for slot in range(3):
        patch = _buyable_patch(s, p, slot)
        if patch >= 0:
            for e in range(ORIENT_START[patch], ORIENT_START[patch + 1]):
                lo, hi = _free_anchors(e, empty_lo, empty_hi)
                total += popcount(lo) + popcount(hi)
    rng, k = _random_below(rng, total)
    for slot in range(3):
        patch = _buyable_patch(s, p, slot)
        if patch >= 0:
            for e in range(ORIENT_START[patch], ORIENT_START[patch + 1]):
                lo, hi = _free_anchors(e, empty_lo, empty_hi)
                c = popcount(lo) + popcount(hi)
                if k < c:
                    code = ORIENT_ID[e] * N_CELLS + _kth_bit(lo, hi, k)
                    return rng, slot * SLOT_STRIDE + code
                k -= c
    return rng, ADVANCE


# ---------------------------------------------------------------------------------------
# moves


@njit(cache=True, inline="always")
def _place(s, p, lo, hi, patch_id, bonus_squares):
    s.quilt[p, 0] |= lo
    s.quilt[p, 1] |= hi
    for w in range(2):
        bits = hi if w else lo
        while bits:
            low = bits & (~bits + _U1)
            cell = w * 64 + popcount(low - _U1)
            s.cell_patches[p, cell] = patch_id
            bits ^= low
    if s.bonus_owner < 0:
        for k in range(bonus_squares.shape[0]):
            m0 = bonus_squares[k, 0]
            m1 = bonus_squares[k, 1]
            if (s.quilt[p, 0] & m0) == m0 and (s.quilt[p, 1] & m1) == m1:
                s.bonus_owner = p
                break


@njit(cache=True, inline="always")
def _settle_turn(s, p, track_end):
    """Whose turn it is once player ``p`` has finished moving."""
    if s.pending_leather > 0:
        s.to_move = p
        return
    o = 1 - p
    if s.position[p] >= track_end and s.position[o] >= track_end:
        s.to_move = -1
    elif s.position[p] > s.position[o]:
        s.to_move = o
    else:  # behind, or on the same space having arrived last
        s.to_move = p


@njit(cache=True, inline="always")
def _move_token(s, p, target, income_before, leather_spaces, track_end):
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


@njit(cache=True)
def apply_action(s, a, income_before, leather_spaces, bonus_squares, track_end):
    """Play the legal action ``a`` in game ``s`` (no checks)."""
    p = s.to_move
    if a >= LEATHER_BASE:
        cell = a - LEATHER_BASE
        _place(s, p, CELL_MASKS[cell, 0], CELL_MASKS[cell, 1], LEATHER_ID, bonus_squares)
        s.pending_leather -= 1
        if s.pending_leather > 0 and _is_full(s, p):
            s.pending_leather = 0  # a patch won on a full quilt is discarded
        _settle_turn(s, p, track_end)
    elif a == ADVANCE:
        target = min(np.int64(s.position[1 - p]) + 1, track_end)
        s.buttons[p] += target - s.position[p]
        _move_token(s, p, target, income_before, leather_spaces, track_end)
    else:
        slot = a // SLOT_STRIDE
        code = a % SLOT_STRIDE
        patch = s.circle[slot]
        s.buttons[p] -= PATCH_COST[patch]
        s.income[p] += PATCH_INCOME[patch]
        lo = PLACEMENT_MASKS[patch, code, 0]
        hi = PLACEMENT_MASKS[patch, code, 1]
        _place(s, p, lo, hi, patch, bonus_squares)
        # The neutral token moves onto the bought patch: the circle now starts after it.
        n = np.int64(s.circle_len)
        first = s.circle[0]
        second = s.circle[1]
        rest = n - slot - 1
        for k in range(rest):
            s.circle[k] = s.circle[k + slot + 1]
        if slot >= 1:
            s.circle[rest] = first
        if slot == 2:
            s.circle[rest + 1] = second
        s.circle[n - 1] = -1
        s.circle_len = n - 1
        target = min(np.int64(s.position[p]) + PATCH_TIME[patch], track_end)
        _move_token(s, p, target, income_before, leather_spaces, track_end)


# ---------------------------------------------------------------------------------------
# batch kernels (compiled serial and parallel by engine.py)


def legal_mask_kernel(state, out):
    rows = out.view(np.uint8)
    for i in prange(state.shape[0]):
        _prefetch_row(rows, i + _PREFETCH_AHEAD, True)
        write_legal_mask(state[i], rows[i])


def check_kernel(state, actions, errors):
    """Fill ``errors`` with each row's :func:`check_action` code (``-1`` passes)."""
    bad = -1
    for i in range(state.shape[0]):
        a = actions[i]
        errors[i] = OK if a == -1 else check_action(state[i], a)
        if errors[i] != OK and bad < 0:
            bad = i
    return bad


def step_kernel(state, actions, income_before, leather_spaces, bonus_squares, track_end):
    for i in prange(state.shape[0]):
        if actions[i] >= 0:
            apply_action(state[i], actions[i], income_before, leather_spaces, bonus_squares,
                         track_end)


def random_actions_kernel(state, seed, out):
    for i in prange(state.shape[0]):
        _, out[i] = random_legal_action(state[i], row_seed(seed, i))


def playout_kernel(state, seed, income_before, leather_spaces, bonus_squares, track_end):
    """Play every unfinished game to its end with uniformly random legal moves."""
    for i in prange(state.shape[0]):
        s = state[i]
        rng = row_seed(seed, i)
        while s.to_move >= 0:
            rng, a = random_legal_action(s, rng)
            apply_action(s, a, income_before, leather_spaces, bonus_squares, track_end)


_WORDS_PER_BLOCK = 32


@njit(cache=True, inline="always")
def _bytes_set(word):
    """How many of the 8 bytes of a mask word are set (each byte is 0 or 1)."""
    return np.int64((word * _H01) >> np.uint64(56))


@njit(cache=True, inline="always")
def _lanes_total(lanes):
    """The sum of the 8 byte lanes of ``lanes`` (each at most 255)."""
    lanes = (lanes & _LANES) + ((lanes >> np.uint64(8)) & _LANES)
    return np.int64((lanes * _H16) >> np.uint64(48))


@njit(cache=True, inline="always")
def _words_set(row, lo, hi):
    """Set bytes in the mask words ``lo..hi-1`` of ``row`` (at most 255 words): a plain sum
    of the words cannot carry between byte lanes."""
    lanes = np.uint64(0)
    for j in range(lo, hi):
        lanes += _load_u64(row, 8 * j)
    return _lanes_total(lanes)


def sample_mask_kernel(mask, seed, out):
    """One action per row drawn uniformly from the set entries of a byte mask, -1 if none.

    Reads each row 8 entries at a time: counts the set entries with one sum of its words,
    draws one, then walks blocks of words and words to the drawn entry.
    """
    width = mask.shape[1]
    n_words = width // 8  # 253 for the action mask: under the 255 that _words_set allows
    for i in prange(mask.shape[0]):
        _prefetch_row(mask, i + _PREFETCH_AHEAD, False)
        row = mask[i]
        total = _words_set(row, 0, n_words)
        for a in range(n_words * 8, width):
            total += row[a]
        out[i] = -1
        if total == 0:
            continue
        _, k = _random_below(row_seed(seed, i), total)
        start = n_words * 8  # where the drawn entry is searched entry by entry
        for lo in range(0, n_words, _WORDS_PER_BLOCK):
            hi = min(lo + _WORDS_PER_BLOCK, n_words)
            c = _words_set(row, lo, hi)
            if k < c:
                for j in range(lo, hi):
                    c = _bytes_set(_load_u64(row, 8 * j))
                    if k < c:
                        start = j * 8
                        break
                    k -= c
                break
            k -= c
        for a in range(start, width):
            if row[a]:
                if k == 0:
                    out[i] = a
                    break
                k -= 1


@njit(cache=True, inline="always")
def _random_setup(rng, first_patch, circle):
    """Fill ``circle`` with every patch id, ``first_patch`` last and the others shuffled
    (Fisher-Yates); returns ``(rng, first player)``."""
    n_ids = circle.shape[0]
    m = 0
    for patch in range(n_ids):
        if patch != first_patch:
            circle[m] = patch
            m += 1
    for j in range(n_ids - 2, 0, -1):
        rng, k = _random_below(rng, j + 1)
        t = circle[j]
        circle[j] = circle[k]
        circle[k] = t
    circle[n_ids - 1] = first_patch
    return _random_below(rng, 2)


@njit(cache=True, inline="always")
def _clear_game(s, start_buttons):
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
def _start_game(s, rng, first_patch, start_buttons):
    """Overwrite ``s`` with a new game set up at random from ``rng``."""
    _clear_game(s, start_buttons)
    _, s.to_move = _random_setup(rng, first_patch, s.circle)


@njit(cache=True)
def set_up_games(state, rows, circles, first_players, start_buttons):
    """New games in ``state[rows]`` with the given circles and first players."""
    for j in range(rows.shape[0]):
        s = state[rows[j]]
        _clear_game(s, start_buttons)
        s.circle[:] = circles[j]
        s.to_move = first_players[j]


def setups_kernel(seed, first_patch, circles, first_players):
    """Random starting circles and first players; row ``j`` uses its own generator state."""
    for j in prange(circles.shape[0]):
        _, first_players[j] = _random_setup(row_seed(seed, j), first_patch, circles[j])


def start_games_kernel(state, rows, seed, first_patch, start_buttons):
    """New random games in ``state[rows]``, set up as :func:`setups_kernel` would."""
    for j in prange(rows.shape[0]):
        _start_game(state[rows[j]], row_seed(seed, j), first_patch, start_buttons)


@njit(cache=True)
def restart_finished(state, seed, first_patch, start_buttons, rows):
    """New random games wherever a game is over; writes their rows to ``rows``, returns how
    many. The ``j``-th restarted game is set up as ``start_games_kernel`` sets up its ``j``-th."""
    n = 0
    for i in range(state.shape[0]):
        if state[i].to_move < 0:
            _start_game(state[i], row_seed(seed, n), first_patch, start_buttons)
            rows[n] = i
            n += 1
    return n


def scores_kernel(state, bonus_points, out):
    for i in prange(state.shape[0]):
        out[i, 0] = score(state[i], 0, bonus_points)
        out[i, 1] = score(state[i], 1, bonus_points)


def winners_kernel(state, bonus_points, out):
    for i in prange(state.shape[0]):
        out[i] = winner(state[i], bonus_points) if state[i].to_move < 0 else -1


BATCH_KERNELS = {
    "legal_mask": legal_mask_kernel,
    "step": step_kernel,
    "random_actions": random_actions_kernel,
    "playout": playout_kernel,
    "sample_mask": sample_mask_kernel,
    "setups": setups_kernel,
    "start_games": start_games_kernel,
    "scores": scores_kernel,
    "winners": winners_kernel,
}
"""Kernels compiled in both a serial and a multi-threaded version."""

check_kernel = njit(cache=True)(check_kernel)


@njit(cache=True)
def legal_actions_one(state, row, out):
    """:func:`enumerate_legal` for one game of a state array."""
    return enumerate_legal(state[row], out)


@njit(cache=True)
def checked_step_one(state, row, a, income_before, leather_spaces, bonus_squares, track_end):
    """Validate and play one action in one game; returns the error code (``OK`` if played)."""
    error = check_action(state[row], a)
    if error == OK:
        apply_action(state[row], a, income_before, leather_spaces, bonus_squares, track_end)
    return error


# ---------------------------------------------------------------------------------------
# compiling batch kernels twice

PARALLEL_MIN_BATCH = 256
"""Batches at least this large use the multi-threaded kernels (when numba has threads)."""


def _renamed(fn: Any, suffix: str) -> Any:
    """A copy of ``fn`` under another name.

    numba's on-disk cache tells functions apart by name and bytecode, not by the
    ``parallel`` flag: compiled from one function, the serial and the parallel kernels
    would share a cache entry and the first one compiled would serve for both.
    """
    name = fn.__name__ + suffix
    code = fn.__code__.replace(co_name=name)
    if hasattr(code, "co_qualname"):
        code = code.replace(co_qualname=fn.__qualname__ + suffix)
    copy = types.FunctionType(code, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    copy.__qualname__ = fn.__qualname__ + suffix
    copy.__module__ = fn.__module__
    copy.__doc__ = fn.__doc__
    return copy


def compile_serial_and_parallel(fn: Any) -> tuple[Any, Any]:
    """``fn`` compiled serial and multi-threaded, each with its own on-disk cache."""
    return njit(cache=True)(fn), njit(cache=True, parallel=True)(_renamed(fn, "_parallel"))


def pick(kernels: tuple[Any, Any], n: int) -> Any:
    """The serial or the parallel kernel of a pair, for a batch of ``n`` games."""
    serial, parallel = kernels
    if n >= PARALLEL_MIN_BATCH and numba.get_num_threads() > 1:
        return parallel
    return serial
