"""Bitboard tables built once from :mod:`patchwork_env.data.patches`.

A quilt is 81 bits held in two ``uint64`` words: cell ``c`` (``row * 9 + col``) is bit ``c``
of word 0 when ``c < 64`` and bit ``c - 64`` of word 1 otherwise. Every table below is a
plain numpy array so that the compiled engine can read it as a constant.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from patchwork_env.data.actions import N_CELLS, N_ORIENTATIONS, SLOT_STRIDE
from patchwork_env.data.patches import N_PATCHES, PATCHES
from patchwork_env.data.rules import BOARD_SIZE, Rules

WORD_BITS = 64


def cells_to_words(cells: list[int] | tuple[int, ...] | np.ndarray) -> tuple[int, int]:
    """The two bitboard words with ``cells`` set."""
    lo = hi = 0
    for c in cells:
        c = int(c)
        if c < WORD_BITS:
            lo |= 1 << c
        else:
            hi |= 1 << (c - WORD_BITS)
    return lo, hi


def words_to_cells(lo: int, hi: int) -> list[int]:
    """The sorted cells set in a bitboard."""
    lo, hi = int(lo), int(hi)
    return [c for c in range(N_CELLS) if (lo if c < WORD_BITS else hi) >> (c % WORD_BITS) & 1]


def _build_placements() -> tuple[np.ndarray, np.ndarray]:
    """``masks[patch, code]`` (two words) and ``legal_code[patch, code]``.

    ``code = orientation * 81 + anchor``; a code is legal for a patch when its orientation
    is canonical (rule 5.2 (docs/rules.md)) and the oriented shape lies fully inside the
    board from that anchor (rule 5.3).
    """
    masks = np.zeros((N_PATCHES, SLOT_STRIDE, 2), dtype=np.uint64)
    legal = np.zeros((N_PATCHES, SLOT_STRIDE), dtype=np.bool_)
    for patch in PATCHES:
        for o in range(N_ORIENTATIONS):
            shape = patch.oriented(o)
            height = max(r for r, _ in shape) + 1
            width = max(c for _, c in shape) + 1
            for anchor in range(N_CELLS):
                ar, ac = divmod(anchor, BOARD_SIZE)
                if ar + height > BOARD_SIZE or ac + width > BOARD_SIZE:
                    continue
                cells = [(ar + r) * BOARD_SIZE + ac + c for r, c in shape]
                code = o * N_CELLS + anchor
                masks[patch.id, code] = cells_to_words(cells)
                legal[patch.id, code] = o in patch.canonical_orientations
    return masks, legal


PLACEMENT_MASKS, PLACEMENT_LEGAL = _build_placements()
"""``(33, 648, 2) uint64`` placement bitboards and ``(33, 648) bool`` canonical-and-inside."""



def _build_orientations() -> tuple[np.ndarray, ...]:
    """Per canonical orientation (rule 5.2): its id, its cells as offsets from the anchor,
    and the anchors from which it stays on the board (a bitboard, rule 5.3).

    With these, the anchors where a shape fits on a quilt are the valid anchors ANDed with
    the empty cells shifted down by each offset: a handful of word operations per shape
    instead of one test per anchor.
    """
    start = np.zeros(N_PATCHES + 1, dtype=np.int32)
    ids, n_cells, offsets, valid = [], [], [], []
    for patch in PATCHES:
        for o in patch.canonical_orientations:
            shape = patch.oriented(o)
            height = max(r for r, _ in shape) + 1
            width = max(c for _, c in shape) + 1
            ids.append(o)
            n_cells.append(len(shape))
            offsets.append([r * BOARD_SIZE + c for r, c in shape] + [0] * (8 - len(shape)))
            valid.append(cells_to_words([r * BOARD_SIZE + c
                                         for r in range(BOARD_SIZE - height + 1)
                                         for c in range(BOARD_SIZE - width + 1)]))
        start[patch.id + 1] = len(ids)
    return (start, np.array(ids, np.int16), np.array(n_cells, np.int16),
            np.array(offsets, np.int16), np.array(valid, np.uint64))


ORIENT_START, ORIENT_ID, ORIENT_SIZE, ORIENT_OFFSETS, ORIENT_ANCHORS = _build_orientations()
"""Canonical orientations of patch ``p`` are entries ``ORIENT_START[p]:ORIENT_START[p+1]``."""


def _build_placement_lists() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    starts = np.zeros(N_PATCHES + 1, dtype=np.int32)
    codes = []
    for p in range(N_PATCHES):
        ok = np.flatnonzero(PLACEMENT_LEGAL[p])
        codes.append(ok)
        starts[p + 1] = starts[p] + len(ok)
    flat_codes = np.concatenate(codes).astype(np.int16)
    patch_of = np.repeat(np.arange(N_PATCHES), np.diff(starts))
    return starts, flat_codes, PLACEMENT_MASKS[patch_of, flat_codes].copy()


LIST_START, LIST_CODE, LIST_MASK = _build_placement_lists()
"""Legal placements of patch ``p`` are entries ``LIST_START[p]:LIST_START[p+1]``, by code."""

PATCH_COST = np.array([p.cost for p in PATCHES], dtype=np.int16)
PATCH_TIME = np.array([p.time for p in PATCHES], dtype=np.int16)
PATCH_INCOME = np.array([p.income for p in PATCHES], dtype=np.int16)
PATCH_SIZE = np.array([p.size for p in PATCHES], dtype=np.int16)

CELL_MASKS = np.array([cells_to_words([c]) for c in range(N_CELLS)], dtype=np.uint64)
"""``(81, 2)``: the bitboard of each single cell."""

FULL_QUILT = np.array(cells_to_words(range(N_CELLS)), dtype=np.uint64)
"""The bitboard with all 81 cells set."""


def bonus_masks(size: int) -> np.ndarray:
    """``(k, 2) uint64``: every ``size`` x ``size`` square of the board (rule 7.1)."""
    squares = []
    for r in range(BOARD_SIZE - size + 1):
        for c in range(BOARD_SIZE - size + 1):
            cells = [(r + i) * BOARD_SIZE + c + j for i in range(size) for j in range(size)]
            squares.append(cells_to_words(cells))
    return np.array(squares, dtype=np.uint64)


class RuleArrays(NamedTuple):
    """One rule set's arrays and scalars as compiled code reads them, by name.

    The compiled players and searches take it as one argument, ``GameBatch.tables.arrays``
    or ``RuleTables.of(rules).arrays``, and read its fields; compiled, a field is read as
    a tuple's item is. Two things to keep in mind: inside a loop compiled with
    ``parallel=True``, take the fields out into locals (one assignment each) before the
    loop, as writes made through a named tuple's fields there can be lost; and numba works
    out a named tuple argument's type in Python at every call from Python, so it belongs
    in calls that do a move's worth of work or more, not in a Python loop over cells.
    """

    income_before: np.ndarray
    """``(track_end + 1,) int16``: the income spaces at or before each space of the time
    track (rules 6.2, 6.4)."""
    leather_spaces: np.ndarray
    """``int16``: the spaces of the time track that hold a leather patch."""
    bonus_masks: np.ndarray
    """``(k, 2) uint64``: every square of the board whose covering earns the bonus tile
    (:func:`bonus_masks`)."""
    track_end: int
    """The last space of the time track."""
    bonus_points: int
    """What the bonus tile is worth."""


class RuleTables:
    """The arrays the compiled engine reads for one :class:`Rules` (shared, read-only)."""

    @staticmethod
    @functools.lru_cache(maxsize=64)
    def of(rules: Rules) -> RuleTables:
        """The tables of ``rules``, built once per rule set."""
        return RuleTables(rules)

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        track = np.zeros(rules.track_end + 1, dtype=np.int16)
        track[list(rules.income_positions)] = 1
        self.income_before = np.cumsum(track).astype(np.int16)
        """Number of income spaces at or before each space (rules 6.2, 6.4)."""
        self.leather_spaces = np.array(rules.leather_positions, dtype=np.int16)
        self.bonus_masks = bonus_masks(rules.bonus_size)
        self.track_end = rules.track_end
        self.bonus_points = rules.bonus_points
        self.start_buttons = rules.start_buttons
        self.arrays = RuleArrays(self.income_before, self.leather_spaces, self.bonus_masks,
                                 self.track_end, self.bonus_points)
        """The rules by name, as the compiled players and searches take them."""
        self.move_args = tuple(self.arrays[:4])
        """The rule arguments every move kernel takes, in order."""
