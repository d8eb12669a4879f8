"""The loops that run the rules of :mod:`.kernels` over a whole batch of games.

:data:`BATCH_KERNELS` are plain Python functions whose outer loop is a ``prange`` over the
games (or over mask rows); :mod:`.engine` compiles each one serial and multi-threaded
(:mod:`.compiling`) and calls the one that suits the batch size. The functions compiled
only serially (:func:`check_kernel`, :func:`set_up_games`, :func:`restart_finished`, the
one-game entry points of :class:`~patchwork_env.views.game.Game`) follow.

First, the legal actions of one game in the two forms besides the mask of
:func:`~.kernels.write_legal_mask`: listed in order (:func:`enumerate_legal`, for
:meth:`~patchwork_env.views.game.Game.legal_actions`) and drawn uniformly at random
(:func:`random_legal_action`: the engine's random moves and playouts, the tree search's
rollouts). Also here: the uniform draw from the set entries of a mask.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from patchwork_env.data.actions import (
    ADVANCE,
    LEATHER_BASE,
    N_ACTIONS,
    N_CELLS,
    N_SLOTS,
    SLOT_STRIDE,
)
from patchwork_env.data.tables import ORIENT_ID, ORIENT_START
from patchwork_env.engine.bits import (
    MAX_WORDS_COUNTED,
    PREFETCH_AHEAD,
    bit_index,
    count_set_bytes,
    kth_bit,
    load_u64,
    lowest_bit,
    popcount,
    prefetch_row,
    random_below,
    row_seed,
    set_bytes_in_word,
)
from patchwork_env.engine.kernels import (
    OK,
    apply_action,
    buyable_patch,
    check_action,
    clear_game,
    draw_setup,
    empty_cells,
    empty_words,
    free_anchors,
    score,
    start_game,
    winner,
    write_legal_mask,
)

# ---------------------------------------------------------------------------------------
# the legal actions of one game, listed or drawn uniformly at random


@njit(cache=True, inline="always")
def _list_bits(out, n, base, lo, hi):
    """Append ``base + c`` for every set bit ``c`` of the bitboard ``lo, hi`` to ``out``
    (from ``out[n]`` on, in increasing order); returns the new length."""
    for w in range(2):
        bits = hi if w else lo
        while bits:
            low = lowest_bit(bits)
            out[n] = base + w * 64 + bit_index(low)
            n += 1
            bits ^= low
    return n


@njit(cache=True)
def enumerate_legal(s, out):
    """Write the legal actions of ``s`` in increasing order to ``out``; return how many."""
    if s.to_move < 0:
        return 0
    p = s.to_move
    empty_lo, empty_hi = empty_words(s, p)
    if s.pending_leather > 0:
        return _list_bits(out, 0, LEATHER_BASE, empty_lo, empty_hi)
    n = 0
    for slot in range(N_SLOTS):
        patch = buyable_patch(s, p, slot)
        if patch < 0:
            continue
        for e in range(ORIENT_START[patch], ORIENT_START[patch + 1]):
            lo, hi = free_anchors(e, empty_lo, empty_hi)
            n = _list_bits(out, n, slot * SLOT_STRIDE + ORIENT_ID[e] * N_CELLS, lo, hi)
    out[n] = ADVANCE
    return n + 1


@njit(cache=True)
def random_legal_action(s, rng):
    """``(new_rng, action)``: an action drawn uniformly from the legal ones, -1 if over.

    Counts the free anchors of every orientation of the buyable patches (a few word
    operations each), draws one legal action among them and advance, then finds it.
    """
    if s.to_move < 0:
        return rng, -1
    p = s.to_move
    empty_lo, empty_hi = empty_words(s, p)
    if s.pending_leather > 0:
        rng, k = random_below(rng, empty_cells(s, p))
        return rng, LEATHER_BASE + kth_bit(empty_lo, empty_hi, k)
    total = 1  # advance
    for slot in range(N_SLOTS):
        patch = buyable_patch(s, p, slot)
        if patch >= 0:
            for e in range(ORIENT_START[patch], ORIENT_START[patch + 1]):
                lo, hi = free_anchors(e, empty_lo, empty_hi)
                total += popcount(lo) + popcount(hi)
    rng, k = random_below(rng, total)
    for slot in range(N_SLOTS):
        patch = buyable_patch(s, p, slot)
        if patch >= 0:
            for e in range(ORIENT_START[patch], ORIENT_START[patch + 1]):
                lo, hi = free_anchors(e, empty_lo, empty_hi)
                c = popcount(lo) + popcount(hi)
                if k < c:
                    return rng, slot * SLOT_STRIDE + ORIENT_ID[e] * N_CELLS + kth_bit(lo, hi, k)
                k -= c
    return rng, ADVANCE


# ---------------------------------------------------------------------------------------
# batch loops, compiled serial and parallel by engine.py


def legal_mask_kernel(state, out):
    """Write the legal mask of every game into the ``(N, N_ACTIONS)`` bool array ``out``."""
    rows = out.view(np.uint8)
    for i in prange(state.shape[0]):
        prefetch_row(rows, i + PREFETCH_AHEAD, True)
        write_legal_mask(state[i], rows[i])


def step_kernel(state, actions, income_before, leather_spaces, bonus_squares, track_end):
    """Play ``actions[i]`` in game ``i`` without the legality test, but never out of bounds:
    an action outside ``0..N_ACTIONS-1`` (``-1`` included) or any action in a finished game
    leaves that game as it is."""
    for i in prange(state.shape[0]):
        a = actions[i]
        if a >= 0 and a < N_ACTIONS and state[i].to_move >= 0:
            apply_action(state[i], a, income_before, leather_spaces, bonus_squares, track_end)


def random_actions_kernel(state, seed, out):
    """One uniformly random legal action per game (-1 where over), row ``i`` drawn from
    :func:`~.bits.row_seed` ``(seed, i)``."""
    for i in prange(state.shape[0]):
        _, out[i] = random_legal_action(state[i], row_seed(seed, i))


@njit(cache=True)
def play_randomly(s, rng, until, income_before, leather_spaces, bonus_squares, track_end):
    """Play uniformly random legal moves in game ``s`` until it ends or seat ``until`` is
    to move (-1: to the end); returns the generator's new state. The one playout loop:
    batch playouts, the random opponent and the tree search's rollouts all use it."""
    while s.to_move >= 0 and s.to_move != until:
        rng, a = random_legal_action(s, rng)
        apply_action(s, a, income_before, leather_spaces, bonus_squares, track_end)
    return rng


def playout_kernel(state, seed, until, income_before, leather_spaces, bonus_squares,
                   track_end):
    """Play every unfinished game with uniformly random legal moves, to its end or until
    seat ``until[i]`` is to move (-1: to the end)."""
    for i in prange(state.shape[0]):
        play_randomly(state[i], row_seed(seed, i), until[i], income_before, leather_spaces,
                      bonus_squares, track_end)


_WORDS_PER_BLOCK = 32


def sample_mask_kernel(mask, seed, out):
    """One action per row drawn uniformly from the set entries of a byte mask, -1 if none.

    Reads each row 8 entries at a time: counts the set entries with one sum of its words,
    draws one, then walks blocks of words and words to the drawn entry.
    """
    width = mask.shape[1]
    n_words = min(width // 8, MAX_WORDS_COUNTED)  # 253 for the action mask
    for i in prange(mask.shape[0]):
        prefetch_row(mask, i + PREFETCH_AHEAD, False)
        row = mask[i]
        total = count_set_bytes(row, 0, n_words)
        for a in range(n_words * 8, width):
            total += row[a]
        out[i] = -1
        if total == 0:
            continue
        _, k = random_below(row_seed(seed, i), total)
        start = n_words * 8  # where the drawn entry is searched entry by entry
        for lo in range(0, n_words, _WORDS_PER_BLOCK):
            hi = min(lo + _WORDS_PER_BLOCK, n_words)
            c = count_set_bytes(row, lo, hi)
            if k < c:
                for j in range(lo, hi):
                    c = set_bytes_in_word(load_u64(row, 8 * j))
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


def setups_kernel(seed, first_patch, circles, first_players):
    """Random starting circles and first players; row ``j`` uses its own generator state."""
    for j in prange(circles.shape[0]):
        _, first_players[j] = draw_setup(row_seed(seed, j), first_patch, circles[j])


def start_games_kernel(state, rows, seed, first_patch, start_buttons):
    """New random games in ``state[rows]``, set up as :func:`setups_kernel` would."""
    for j in prange(rows.shape[0]):
        start_game(state[rows[j]], row_seed(seed, j), first_patch, start_buttons)


def scores_kernel(state, bonus_points, out):
    """``out[i] = (score of player 0, score of player 1)`` of game ``i``."""
    for i in prange(state.shape[0]):
        out[i, 0] = score(state[i], 0, bonus_points)
        out[i, 1] = score(state[i], 1, bonus_points)


def winners_kernel(state, bonus_points, out):
    """``out[i]``: the winner of game ``i`` if it is over, else -1."""
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

# ---------------------------------------------------------------------------------------
# compiled serially only


@njit(cache=True)
def check_kernel(state, actions, errors):
    """Fill ``errors`` with each row's :func:`~.kernels.check_action` code (``-1`` passes);
    returns the first refused row, or -1."""
    bad = -1
    for i in range(state.shape[0]):
        a = actions[i]
        errors[i] = OK if a == -1 else check_action(state[i], a)
        if errors[i] != OK and bad < 0:
            bad = i
    return bad


@njit(cache=True)
def set_up_games(state, rows, circles, first_players, start_buttons):
    """New games in ``state[rows]`` with the given circles and first players."""
    for j in range(rows.shape[0]):
        s = state[rows[j]]
        clear_game(s, start_buttons)
        s.circle[:] = circles[j]
        s.to_move = first_players[j]


@njit(cache=True)
def restart_finished(state, seed, first_patch, start_buttons, rows):
    """New random games wherever a game is over; writes their rows to ``rows``, returns how
    many. The ``j``-th restarted game is set up as ``start_games_kernel`` sets up its ``j``-th."""
    n = 0
    for i in range(state.shape[0]):
        if state[i].to_move < 0:
            start_game(state[i], row_seed(seed, n), first_patch, start_buttons)
            rows[n] = i
            n += 1
    return n


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
