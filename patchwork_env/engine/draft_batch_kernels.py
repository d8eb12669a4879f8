"""The loops that run the draft rules of :mod:`.draft_kernels` over a batch of games.

:data:`DRAFT_BATCH_KERNELS` are plain Python functions whose outer loop is a ``prange``;
:mod:`.draft_batch` compiles each one serial and multi-threaded (:mod:`.compiling`). The
legal actions are listed, counted and drawn at random with the main game's visitors
(:mod:`.batch_kernels`) walking the draft's own :func:`~.draft_kernels.visit_legal`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from patchwork_env.data.draft_actions import N_DRAFT_ACTIONS
from patchwork_env.engine.batch_kernels import _count_block, _find_block, _list_block
from patchwork_env.engine.bits import PREFETCH_AHEAD, prefetch_row, random_below, row_seed
from patchwork_env.engine.draft_kernels import (
    OK,
    apply_action,
    can_buy_in_game,
    check_action,
    draw_deck,
    redeal_deck,
    score,
    set_up,
    start_game,
    visit_legal,
    winner,
    write_legal_mask,
)

# ---------------------------------------------------------------------------------------
# the legal actions of one game, listed or drawn uniformly at random


@njit(cache=True)
def enumerate_legal(s, out):
    """Write the legal actions of ``s`` in increasing order to ``out``; return how many."""
    _, n = visit_legal(s, _list_block, (out, 0))
    return n


@njit(cache=True)
def random_legal_action(s, rng):
    """``(new_rng, action)``: an action drawn uniformly from the legal ones, -1 if over.
    Counts the legal actions block by block, draws one, walks back to its block: no mask
    is built."""
    if s.to_move < 0:
        return rng, -1
    total = visit_legal(s, _count_block, 0)
    rng, k = random_below(rng, total)
    _, action = visit_legal(s, _find_block, (k, -1))
    return rng, action


@njit(cache=True)
def play_randomly(s, rng, until, star_bits, star_lo, star_hi):
    """Play uniformly random legal moves in ``s`` until it ends or seat ``until`` is to move
    (-1: to the end); returns the generator's new state."""
    while s.to_move >= 0 and s.to_move != until:
        rng, a = random_legal_action(s, rng)
        apply_action(s, a, star_bits, star_lo, star_hi)
    return rng


# ---------------------------------------------------------------------------------------
# batch loops, compiled serial and parallel by draft_batch.py


def legal_mask_kernel(state, out):
    """Write the legal mask of every game into the ``(N, 1947)`` bool array ``out``."""
    rows = out.view(np.uint8)
    for i in prange(state.shape[0]):
        prefetch_row(rows, i + PREFETCH_AHEAD, True)
        write_legal_mask(state[i], rows[i])


def step_kernel(state, actions, star_bits, star_lo, star_hi):
    """Play ``actions[i]`` in game ``i`` without the legality test, but never out of
    bounds: an action outside ``0..1946`` (``-1`` included) or in a finished game leaves
    that game as it is."""
    for i in prange(state.shape[0]):
        a = actions[i]
        if a >= 0 and a < N_DRAFT_ACTIONS and state[i].to_move >= 0:
            apply_action(state[i], a, star_bits, star_lo, star_hi)


def random_actions_kernel(state, seed, out):
    """One uniformly random legal action per game (-1 where over), row ``i`` drawn from
    :func:`~.bits.row_seed` ``(seed, i)``."""
    for i in prange(state.shape[0]):
        _, out[i] = random_legal_action(state[i], row_seed(seed, i))


def playout_kernel(state, seed, until, star_bits, star_lo, star_hi):
    """Play every unfinished game randomly to its end, or until seat ``until[i]`` is to
    move (-1: to the end)."""
    for i in prange(state.shape[0]):
        play_randomly(state[i], row_seed(seed, i), until[i], star_bits, star_lo, star_hi)


def start_games_kernel(state, rows, seed, start_buttons):
    """Rule 13.1: new random games in ``state[rows]``; the ``j``-th from ``row_seed(seed,
    j)``."""
    for j in prange(rows.shape[0]):
        start_game(state[rows[j]], row_seed(seed, j), start_buttons)


def setups_kernel(seed, decks, first_players):
    """Rule 13.1: random decks and first players, row ``j`` as :func:`start_games_kernel`
    draws its ``j``-th game."""
    for j in prange(decks.shape[0]):
        _, first_players[j] = draw_deck(row_seed(seed, j), decks[j])


def redeal_kernel(state, seed):
    """Shuffle the face-down deck of every game (rule 13.1's hidden order), row ``i`` from
    ``row_seed(seed, i)``; the face-up row and everything else stay."""
    for i in prange(state.shape[0]):
        redeal_deck(state[i], row_seed(seed, i))


def scores_kernel(state, out):
    """Rule 13.8: ``out[i] = (score of player 0, score of player 1)``."""
    for i in prange(state.shape[0]):
        out[i, 0] = score(state[i], 0)
        out[i, 1] = score(state[i], 1)


def winners_kernel(state, out):
    """Rule 13.8: the winner of each finished game, -1 where still playing."""
    for i in prange(state.shape[0]):
        out[i] = winner(state[i]) if state[i].to_move < 0 else -1


DRAFT_BATCH_KERNELS = {
    "legal_mask": legal_mask_kernel,
    "step": step_kernel,
    "random_actions": random_actions_kernel,
    "playout": playout_kernel,
    "start_games": start_games_kernel,
    "setups": setups_kernel,
    "redeal": redeal_kernel,
    "scores": scores_kernel,
    "winners": winners_kernel,
}
"""Kernels compiled in both a serial and a multi-threaded version."""

# ---------------------------------------------------------------------------------------
# compiled serially only


@njit(cache=True)
def check_kernel(state, actions, errors):
    """Fill ``errors`` with each row's :func:`~.draft_kernels.check_action` code (``-1``
    passes); returns the first refused row, or -1."""
    bad = -1
    for i in range(state.shape[0]):
        a = actions[i]
        errors[i] = OK if a == -1 else check_action(state[i], a)
        if errors[i] != OK and bad < 0:
            bad = i
    return bad


@njit(cache=True)
def set_up_games(state, rows, decks, first_players, start_buttons):
    """Rule 13.1: new games in ``state[rows]`` with the given deck orders and first
    players."""
    for j in range(rows.shape[0]):
        s = state[rows[j]]
        s.deck[:] = decks[j]
        set_up(s, first_players[j], start_buttons)


@njit(cache=True)
def restart_finished(state, seed, start_buttons, rows):
    """New random games wherever a game is over; writes their rows to ``rows``, returns how
    many (the ``j``-th set up as :func:`start_games_kernel` sets up its ``j``-th)."""
    n = 0
    for i in range(state.shape[0]):
        if state[i].to_move < 0:
            start_game(state[i], row_seed(seed, n), start_buttons)
            rows[n] = i
            n += 1
    return n


@njit(cache=True)
def legal_actions_one(state, row, out):
    """:func:`enumerate_legal` for one game of a state array."""
    return enumerate_legal(state[row], out)


@njit(cache=True)
def checked_step_one(state, row, a, star_bits, star_lo, star_hi):
    """Validate and play one action in one game; returns the error code (``OK`` if
    played)."""
    error = check_action(state[row], a)
    if error == OK:
        apply_action(state[row], a, star_bits, star_lo, star_hi)
    return error


@njit(cache=True)
def buyers_one(state, row):
    """Rule 13.7 (b) for both players of one game: bit ``p`` set when player ``p`` could
    buy some patch still in the game (face up or in the deck)."""
    s = state[row]
    return np.int64(can_buy_in_game(s, 0)) + 2 * np.int64(can_buy_in_game(s, 1))
