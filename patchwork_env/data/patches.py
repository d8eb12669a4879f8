"""The 33 patches of Patchwork, the leather patch, and their orientations.

Section 10 of the rules page (docs/rules.md), whose catalogue docs/make_rules_patches.py
writes from this module. A shape is written as rows separated by ``/`` with ``X`` for a
covered cell (rule 10.2). Orientation ``o = mirror * 4 + rotation`` (rule 5.1): the shape
is mirrored left-right when ``mirror`` is 1, then rotated ``rotation`` quarter turns
clockwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

Cells = tuple[tuple[int, int], ...]
"""Covered cells of a shape as sorted ``(row, col)`` pairs, normalised to the origin."""

N_ORIENTATIONS = 8


@dataclass(frozen=True)
class Patch:
    """One patch: its shape and what it costs, takes and earns."""

    id: int
    shape: str
    cost: int
    time: int
    income: int

    @cached_property
    def cells(self) -> Cells:
        """The covered cells of the shape as printed in the rules (orientation 0)."""
        return tuple(
            sorted(
                (r, c)
                for r, row in enumerate(self.shape.split("/"))
                for c, ch in enumerate(row)
                if ch == "X"
            )
        )

    @property
    def size(self) -> int:
        """Number of cells the patch covers."""
        return len(self.cells)

    def oriented(self, orientation: int) -> Cells:
        """Rule 5.1: the cells of the patch in ``orientation`` (0..7), normalised to the
        origin."""
        if not 0 <= orientation < N_ORIENTATIONS:
            raise ValueError(f"orientation must be in 0..7, got {orientation}")
        cells = list(self.cells)
        if orientation >= 4:
            width = max(c for _, c in cells) + 1
            cells = [(r, width - 1 - c) for r, c in cells]
        for _ in range(orientation % 4):
            height = max(r for r, _ in cells) + 1
            cells = [(c, height - 1 - r) for r, c in cells]  # quarter turn clockwise
        return _normalise(cells)

    @cached_property
    def canonical_orientations(self) -> tuple[int, ...]:
        """Rule 5.2: the first orientation of each distinct oriented shape, in increasing
        order."""
        seen: set[Cells] = set()
        keep = []
        for o in range(N_ORIENTATIONS):
            cells = self.oriented(o)
            if cells not in seen:
                seen.add(cells)
                keep.append(o)
        return tuple(keep)

    def canonical(self, orientation: int) -> int:
        """Rule 5.2: the canonical orientation giving the shape ``orientation`` gives."""
        shape = self.oriented(orientation)
        return next(o for o in self.canonical_orientations if self.oriented(o) == shape)


def _normalise(cells: list[tuple[int, int]]) -> Cells:
    r0 = min(r for r, _ in cells)
    c0 = min(c for _, c in cells)
    return tuple(sorted((r - r0, c - c0) for r, c in cells))


# (shape, cost, time, income) by id: the catalogue of rule 10.3 (docs/rules.md).
_TABLE = (
    ("XX", 2, 1, 0),
    ("XXX", 2, 2, 0),
    ("XXXX", 3, 3, 1),
    ("XXXXX", 7, 1, 1),
    ("XX/XX", 6, 5, 2),
    ("XX./XXX", 2, 2, 0),
    ("XX../XXXX", 10, 5, 3),
    (".XX./XXXX", 7, 4, 2),
    ("XXX./.XXX", 4, 2, 0),
    (".XX/.XX/XX.", 8, 6, 3),
    ("X.X/XXX", 1, 2, 0),
    ("X..X/XXXX", 1, 5, 1),
    ("X.X/XXX/.X.", 3, 6, 2),
    ("XXX/.X.", 2, 2, 0),
    ("XXX/.X./.X.", 5, 5, 2),
    ("XXX/.X./.X./.X.", 7, 2, 2),
    (".X./XXX/.X./.X.", 0, 3, 1),
    ("X./X./XX", 4, 2, 1),
    ("X./X./XX", 4, 6, 2),
    ("X./X./X./XX", 10, 3, 2),
    ("X./X./XX/X.", 3, 4, 1),
    (".X./XXX/.X.", 5, 4, 2),
    (".X./.X./XXX/.X./.X.", 1, 4, 1),
    (".XX./XXXX/.XX.", 5, 3, 1),
    ("X.X/XXX/X.X", 2, 3, 0),
    (".X/XX", 3, 1, 0),
    (".X/XX", 1, 3, 0),
    (".X/XX/X.", 3, 2, 1),
    (".X/XX/X.", 7, 6, 3),
    (".X/.X/XX/X.", 2, 3, 1),
    ("...X/XXXX/X...", 1, 2, 0),
    ("..X./XXXX/.X..", 2, 1, 0),
    ("..X/.XX/XX.", 10, 4, 3),
)

PATCHES: tuple[Patch, ...] = tuple(Patch(i, *row) for i, row in enumerate(_TABLE))
"""The 33 patches, indexed by id."""

N_PATCHES = len(PATCHES)

LEATHER_ID = N_PATCHES
"""Id used for a leather patch wherever a patch id is recorded (33)."""

LEATHER = Patch(LEATHER_ID, "X", 0, 0, 0)
"""The 1x1 leather patch won on the time track (rules 6.5-6.7, 10.3)."""

FIRST_PATCH_ID = 0
"""The 1x2 patch that starts the game last in the circle, just behind the neutral token
(rule 2.1)."""
