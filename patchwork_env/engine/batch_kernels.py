"""The loops that run the rules of :mod:`.kernels` over a whole batch of games.

:data:`BATCH_KERNELS` are plain Python functions whose outer loop is a ``prange`` over the
games (or over mask rows); :mod:`.engine` compiles each one serial and multi-threaded
(:mod:`.compiling`) and calls the one that suits the batch size. The functions compiled
only serially (:func:`check_kernel`, :func:`set_up_games`, :func:`restart_finished`, the
one-game entry points of :class:`~patchwork_env.views.game.Game`) follow.

First, the legal actions of one game (rule 11.5 of docs/rules.md) in the two forms besides
the mask of :func:`~.kernels.write_legal_mask`, both walking the same
:func:`~.kernels.visit_legal`: listed in order (:func:`enumerate_legal`, for
:meth:`~patchwork_env.views.game.Game.legal_actions`) and drawn uniformly at random
(:func:`random_legal_action`: the engine's random moves and playouts, the tree search's
rollouts); and why an action is illegal (:func:`check_action`, rule 11.6). Also here: the
uniform draw from the set entries of a mask.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from patchwork_env.data.actions import (
    ADVANCE,
    LEATHER_BASE,
    N_ACTIONS,
    SLOT_STRIDE,
)
from patchwork_env.data.tables import CELL_MASKS, PATCH_COST, PLACEMENT_LEGAL, PLACEMENT_MASKS
from patchwork_env.engine.bits import (
    MAX_WORDS_COUNTED,
    PREFETCH_AHEAD,
    count_set_bytes,
    kth_bit,
    list_set_bits,
    load_u64,
    popcount,
    prefetch_row,
    random_below,
    row_seed,
    set_bytes_in_word,
)
from patchwork_env.engine.kernels import (
    ERR_BAD_PLACEMENT,
    ERR_CELL_TAKEN,
    ERR_GAME_OVER,
    ERR_LEATHER_PENDING,
    ERR_NO_LEATHER,
    ERR_NO_SLOT,
    ERR_OUT_OF_RANGE,
    ERR_OVERLAP,
    ERR_TOO_EXPENSIVE,
    OK,
    apply_action,
    clear_game,
    draw_setup,
    fits,
    n_slots,
    score,
    start_game,
    visit_legal,
    winner,
    write_legal_mask,
)

# ---------------------------------------------------------------------------------------
# the legal actions of one game (rule 11.5), listed or drawn uniformly at random; why an
# action is illegal (rule 11.6)


@njit(cache=True, inline="always")
def _list_block(acc, base, lo, hi):
    """Visitor of :func:`~.kernels.visit_legal`: append the block's actions to a list."""
    out, n = acc
    return (out, list_set_bits(out, n, base, lo, hi)), False


@njit(cache=True)
def enumerate_legal(s, out):
    """Write the legal actions of ``s`` in increasing order to ``out``; return how many."""
    _, n = visit_legal(s, _list_block, (out, 0))
    return n


@njit(cache=True, inline="always")
def _count_block(total, base, lo, hi):
    """Visitor of :func:`~.kernels.visit_legal`: count the block's actions."""
    return total + popcount(lo) + popcount(hi), False


@njit(cache=True, inline="always")
def _find_block(acc, base, lo, hi):
    """Visitor of :func:`~.kernels.visit_legal`: find the legal action ``k`` (from 0) of
    ``acc = (k, -1)``; stops with ``(0, action)`` at the block that holds it."""
    k, _ = acc
    c = popcount(lo) + popcount(hi)
    if k < c:
        return (0, base + kth_bit(lo, hi, k)), True
    return (k - c, -1), False


@njit(cache=True)
def random_legal_action(s, rng):
    """``(new_rng, action)``: an action drawn uniformly from the legal ones, -1 if over.

    Counts the legal actions (a few word operations per block), draws one of them, then
    walks the blocks again up to the one that holds it.
    """
    if s.to_move < 0:
        return rng, -1
    total = visit_legal(s, _count_block, 0)
    rng, k = random_below(rng, total)
    _, action = visit_legal(s, _find_block, (k, -1))
    return rng, action


@njit(cache=True)
def check_action(s, a):
    """Rule 11.6: why action ``a`` is illegal in game ``s``, or ``OK``."""
    if s.to_move < 0:
        return ERR_GAME_OVER
    if a < 0 or a >= N_ACTIONS:
        return ERR_OUT_OF_RANGE
    p = s.to_move
    if a >= LEATHER_BASE:
        if s.pending_leather == 0:
            return ERR_NO_LEATHER
        if not fits(s, p, CELL_MASKS[a - LEATHER_BASE, 0], CELL_MASKS[a - LEATHER_BASE, 1]):
            return ERR_CELL_TAKEN
        return OK
    if s.pending_leather > 0:
        return ERR_LEATHER_PENDING
    if a == ADVANCE:
        return OK
    slot = a // SLOT_STRIDE
    code = a % SLOT_STRIDE
    if slot >= n_slots(s):
        return ERR_NO_SLOT
    patch = s.circle[slot]
    if not PLACEMENT_LEGAL[patch, code]:
        return ERR_BAD_PLACEMENT
    if PATCH_COST[patch] > s.buttons[p]:
        return ERR_TOO_EXPENSIVE
    if not fits(s, p, PLACEMENT_MASKS[patch, code, 0], PLACEMENT_MASKS[patch, code, 1]):
        return ERR_OVERLAP
    return OK


# ---------------------------------------------------------------------------------------
# batch loops, compiled serial and parallel by engine.py


def legal_mask_kernel(state, out):
    """Write the legal mask of every game into the ``(N, N_ACTIONS)`` bool array ``out``."""
    rows = out.view(np.uint8)
    for i in prange(state.shape[0]):
        prefetch_row(rows, i + PREFETCH_AHEAD, True)
        write_legal_mask(state[i], rows[i])


def step_kernel(state, actions, income_before, leather_spaces, bonus_squares, track_end):
    """Rule 4.1: play ``actions[i]`` in game ``i`` without the legality test, but never out
    of bounds: an action outside ``0..N_ACTIONS-1`` (``-1`` included) or any action in a
    finished game leaves that game as it is."""
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
    """Rules 2.1 and 2.3: random starting circles and first players; row ``j`` uses its own
    generator state."""
    for j in prange(circles.shape[0]):
        _, first_players[j] = draw_setup(row_seed(seed, j), first_patch, circles[j])


def start_games_kernel(state, rows, seed, first_patch, start_buttons):
    """Section 2: new random games in ``state[rows]``, set up as :func:`setups_kernel`
    would."""
    for j in prange(rows.shape[0]):
        start_game(state[rows[j]], row_seed(seed, j), first_patch, start_buttons)


def scores_kernel(state, bonus_points, out):
    """Rule 8.2: ``out[i] = (score of player 0, score of player 1)`` of game ``i``."""
    for i in prange(state.shape[0]):
        out[i, 0] = score(state[i], 0, bonus_points)
        out[i, 1] = score(state[i], 1, bonus_points)


def winners_kernel(state, bonus_points, out):
    """Rules 8.1, 8.3 and 8.4: ``out[i]``, the winner of game ``i`` if it is over, else
    -1."""
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
    """Section 2: new games in ``state[rows]`` with the given circles and first players."""
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
