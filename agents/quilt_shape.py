"""Compiled measures of how fillable a quilt still is, on the engine's two-word bitboards.

A quilt is 81 bits in two ``uint64`` words (cell ``c = row * 9 + col`` is bit ``c`` of the
81-bit number ``lo | hi << 64``). Moving every cell one row down is a shift by 9, one column
right a shift by 1 with the wrapped column masked off, so the neighbourhood of every empty
cell is known after four shifts.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from patchwork_env.data.rules import BOARD_SIZE
from patchwork_env.data.tables import FULL_QUILT, cells_to_words
from patchwork_env.engine.bits import popcount as popcount
from patchwork_env.engine.bits import shift_down

_ROWS = range(BOARD_SIZE)
_NOT_FIRST_COL = np.array(
    cells_to_words([r * BOARD_SIZE + c for r in _ROWS for c in range(1, BOARD_SIZE)]),
    dtype=np.uint64,
)
_NOT_LAST_COL = np.array(
    cells_to_words([r * BOARD_SIZE + c for r in _ROWS for c in range(BOARD_SIZE - 1)]),
    dtype=np.uint64,
)
_FULL_LO = FULL_QUILT[0]
_FULL_HI = FULL_QUILT[1]
_ROW = np.uint64(BOARD_SIZE)
_ONE = np.uint64(1)
_W = np.uint64(64)


@njit(cache=True, inline="always")
def _shift_up(lo, hi, k):
    """Every cell ``c`` to ``c + k`` (towards higher cells), ``0 < k < 64``."""
    return lo << k, ((hi << k) | (lo >> (_W - k))) & _FULL_HI


@njit(cache=True, inline="always")
def _empty_neighbours(q_lo, q_hi):
    """The empty cells of quilt ``q`` and, for each direction (above, below, left, right),
    the cells whose neighbour that way is empty; each as two words."""
    e_lo = ~q_lo & _FULL_LO
    e_hi = ~q_hi & _FULL_HI
    na_lo, na_hi = _shift_up(e_lo, e_hi, _ROW)  # neighbour above (c - 9)
    nb_lo, nb_hi = shift_down(e_lo, e_hi, _ROW)  # neighbour below (c + 9)
    nl_lo, nl_hi = _shift_up(e_lo, e_hi, _ONE)  # neighbour to the left (c - 1)
    nl_lo &= _NOT_FIRST_COL[0]
    nl_hi &= _NOT_FIRST_COL[1]
    nr_lo, nr_hi = shift_down(e_lo, e_hi, _ONE)  # neighbour to the right (c + 1)
    nr_lo &= _NOT_LAST_COL[0]
    nr_hi &= _NOT_LAST_COL[1]
    return e_lo, e_hi, na_lo, na_hi, nb_lo, nb_hi, nl_lo, nl_hi, nr_lo, nr_hi


@njit(cache=True)
def isolated_cells(q_lo, q_hi):
    """The empty cells of quilt ``q`` with no empty neighbour, as two words: holes that no
    patch of two or more cells can fill."""
    e_lo, e_hi, na_lo, na_hi, nb_lo, nb_hi, nl_lo, nl_hi, nr_lo, nr_hi = _empty_neighbours(
        q_lo, q_hi)
    return e_lo & ~(na_lo | nb_lo | nl_lo | nr_lo), e_hi & ~(na_hi | nb_hi | nl_hi | nr_hi)


@njit(cache=True)
def shape_features(q_lo, q_hi):
    """``(empty, edge, isolated, dead_ends)`` of a quilt whose covered cells are ``q``.

    ``edge`` counts the sides of empty cells that face a covered cell or the border (the
    ragged edge of the free area); ``isolated`` counts empty cells with no empty neighbour
    (holes only a 1x1 can fill); ``dead_ends`` counts empty cells with exactly one.
    """
    # n? = "the neighbour in that direction is empty", as a set of cells
    e_lo, e_hi, na_lo, na_hi, nb_lo, nb_hi, nl_lo, nl_hi, nr_lo, nr_hi = _empty_neighbours(
        q_lo, q_hi)
    empty = popcount(e_lo) + popcount(e_hi)
    open_sides = (
        popcount(e_lo & na_lo) + popcount(e_hi & na_hi)
        + popcount(e_lo & nb_lo) + popcount(e_hi & nb_hi)
        + popcount(e_lo & nl_lo) + popcount(e_hi & nl_hi)
        + popcount(e_lo & nr_lo) + popcount(e_hi & nr_hi)
    )
    any_lo = na_lo | nb_lo | nl_lo | nr_lo
    any_hi = na_hi | nb_hi | nl_hi | nr_hi
    two_lo = (na_lo & (nb_lo | nl_lo | nr_lo)) | (nb_lo & (nl_lo | nr_lo)) | (nl_lo & nr_lo)
    two_hi = (na_hi & (nb_hi | nl_hi | nr_hi)) | (nb_hi & (nl_hi | nr_hi)) | (nl_hi & nr_hi)
    isolated = popcount(e_lo & ~any_lo) + popcount(e_hi & ~any_hi)
    dead_ends = popcount(e_lo & any_lo & ~two_lo) + popcount(e_hi & any_hi & ~two_hi)
    return empty, 4 * empty - open_sides, isolated, dead_ends


@njit(cache=True)
def best_square_cover(q_lo, q_hi, squares):
    """The most covered cells in any one of ``squares`` (``(k, 2)`` bitboards)."""
    best = 0
    for k in range(squares.shape[0]):
        n = popcount(q_lo & squares[k, 0]) + popcount(q_hi & squares[k, 1])
        best = max(best, n)
    return best
