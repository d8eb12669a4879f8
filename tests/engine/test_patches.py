"""The patch table and its orientations."""

from __future__ import annotations

import numpy as np

from patchwork_env.data.patches import LEATHER, PATCHES
from patchwork_env.data.tables import (
    LIST_START,
    ORIENT_OFFSETS,
    PLACEMENT_LEGAL,
    PLACEMENT_MASKS,
    words_to_cells,
)


def test_the_totals_of_the_rules_document() -> None:
    assert len(PATCHES) == 33
    assert sum(p.size for p in PATCHES) == 166
    assert sum(p.cost for p in PATCHES) == 133
    assert sum(p.time for p in PATCHES) == 107
    assert sum(p.income for p in PATCHES) == 38
    assert (LEATHER.size, LEATHER.cost, LEATHER.time, LEATHER.income) == (1, 0, 0, 0)


def test_orientation_is_a_mirror_then_clockwise_quarter_turns() -> None:
    l_shape = PATCHES[17]  # X./X./XX
    assert l_shape.oriented(0) == ((0, 0), (1, 0), (2, 0), (2, 1))
    assert l_shape.oriented(1) == ((0, 0), (0, 1), (0, 2), (1, 0))  # XXX/X..
    assert l_shape.oriented(4) == ((0, 1), (1, 1), (2, 0), (2, 1))  # .X/.X/XX


def test_distinct_orientation_counts() -> None:
    counts = {p.id: len(p.canonical_orientations) for p in PATCHES}
    assert counts[4] == 1  # XX/XX
    assert counts[0] == counts[1] == counts[2] == counts[3] == 2  # straight lines
    assert counts[21] == 1  # the plus
    assert counts[24] == 2  # X.X/XXX/X.X
    assert counts[17] == 8  # the L
    assert counts[26] == 4  # the small corner


def test_every_legal_placement_of_a_patch_covers_a_different_set_of_cells() -> None:
    for p in PATCHES:
        codes = np.flatnonzero(PLACEMENT_LEGAL[p.id])
        covered = {tuple(words_to_cells(*PLACEMENT_MASKS[p.id, c])) for c in codes}
        assert len(covered) == len(codes)
        assert all(len(c) == p.size for c in covered)
        assert LIST_START[p.id + 1] - LIST_START[p.id] == len(codes)


def test_orientation_cell_offsets_stay_below_one_word() -> None:
    # the legal-mask kernels shift the empty cells by these offsets without a branch for
    # offsets of 64 or more
    assert ORIENT_OFFSETS.min() >= 0 and ORIENT_OFFSETS.max() < 64
