"""The ``Discrete(2026)`` action space: encoding, decoding and a readable notation.

Section 11 of the rules page (docs/rules.md): the layout below is rule 11.1, the notation
rule 11.7.

=============  ==========================================================================
action         meaning
=============  ==========================================================================
0 .. 1943      buy: ``slot * 648 + orientation * 81 + anchor``; ``anchor = row * 9 + col``
               of the top-left corner of the oriented shape's bounding box
1944           advance
1945 .. 2025   place a pending leather patch on cell ``action - 1945``
=============  ==========================================================================

The notation names cells by column letter and row number, ``a1`` being the top-left cell
(row 0, column 0) and ``i9`` the bottom-right one: ``buy slot 1 o3 at c4``, ``advance``,
``leather at e5``. :func:`parse_action` reads what :func:`format_action` writes.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from patchwork_env.data.rules import BOARD_SIZE

N_CELLS = BOARD_SIZE * BOARD_SIZE
N_SLOTS = 3
N_ORIENTATIONS = 8
SLOT_STRIDE = N_ORIENTATIONS * N_CELLS  # 648
N_BUY_ACTIONS = N_SLOTS * SLOT_STRIDE  # 1944
ADVANCE = N_BUY_ACTIONS  # 1944
LEATHER_BASE = ADVANCE + 1  # 1945
N_ACTIONS = LEATHER_BASE + N_CELLS  # 2026
NO_ACTION = -1
"""Stands for "this game does not move" in a batch of actions."""

_COLUMNS = "abcdefghi"


class Buy(NamedTuple):
    """A decoded buy action."""

    slot: int
    orientation: int
    anchor: int


class Advance(NamedTuple):
    """The decoded advance action."""


class Leather(NamedTuple):
    """A decoded leather placement."""

    cell: int


Move = Buy | Advance | Leather


def encode_buy(slot: int, orientation: int, anchor: int) -> int:
    """Rule 11.2: the action that buys the patch in ``slot`` and places it at ``anchor``."""
    if not 0 <= slot < N_SLOTS:
        raise ValueError(f"slot must be in 0..{N_SLOTS - 1}, got {slot}")
    if not 0 <= orientation < N_ORIENTATIONS:
        raise ValueError(f"orientation must be in 0..{N_ORIENTATIONS - 1}, got {orientation}")
    _check_cell(anchor, "anchor")
    return slot * SLOT_STRIDE + orientation * N_CELLS + anchor


def encode_leather(cell: int) -> int:
    """Rule 11.4: the action that places a pending leather patch on ``cell``."""
    _check_cell(cell, "cell")
    return LEATHER_BASE + cell


def decode_action(action: int) -> Move:
    """Rule 11.1: split an action id into :class:`Buy`, :class:`Advance` or
    :class:`Leather`."""
    action = _check_action(action)
    if action < N_BUY_ACTIONS:
        slot, rest = divmod(action, SLOT_STRIDE)
        orientation, anchor = divmod(rest, N_CELLS)
        return Buy(slot, orientation, anchor)
    if action == ADVANCE:
        return Advance()
    return Leather(action - LEATHER_BASE)


def cell_name(cell: int) -> str:
    """Rule 11.7: ``a1`` .. ``i9``, column letter then row number (``a1`` is cell 0)."""
    _check_cell(cell, "cell")
    row, col = divmod(cell, BOARD_SIZE)
    return f"{_COLUMNS[col]}{row + 1}"


def parse_cell(name: str) -> int:
    """The cell index of a name such as ``c4``."""
    m = re.fullmatch(r"\s*([a-i])([1-9])\s*", name.lower())
    if not m:
        raise ValueError(f"not a cell name: {name!r} (expected a1 .. i9)")
    return (int(m.group(2)) - 1) * BOARD_SIZE + _COLUMNS.index(m.group(1))


def format_action(action: int) -> str:
    """Rule 11.7: a readable notation of an action, e.g. ``buy slot 1 o3 at c4``."""
    move = decode_action(action)
    if isinstance(move, Buy):
        return f"buy slot {move.slot} o{move.orientation} at {cell_name(move.anchor)}"
    if isinstance(move, Advance):
        return "advance"
    return f"leather at {cell_name(move.cell)}"


_BUY_RE = re.compile(r"buy\s+slot\s+(\d+)\s+o(\d+)\s+at\s+(\S+)")
_LEATHER_RE = re.compile(r"leather\s+at\s+(\S+)")


def parse_action(text: str) -> int:
    """Rule 11.7: read the notation of :func:`format_action` (or a bare action id) back to
    an id."""
    if not isinstance(text, str):
        raise TypeError(f"expected a move as text, got {type(text).__name__}")
    s = " ".join(text.strip().lower().split())
    if s.isdigit():
        return _check_action(int(s))
    if s == "advance":
        return ADVANCE
    if m := _BUY_RE.fullmatch(s):
        return encode_buy(int(m.group(1)), int(m.group(2)), parse_cell(m.group(3)))
    if m := _LEATHER_RE.fullmatch(s):
        return encode_leather(parse_cell(m.group(1)))
    raise ValueError(
        f"cannot read move {text!r}: expected 'advance', 'buy slot S oO at CELL', "
        "'leather at CELL' or an action id"
    )


def _check_cell(cell: int, what: str) -> None:
    if not 0 <= cell < N_CELLS:
        raise ValueError(f"{what} must be a cell in 0..{N_CELLS - 1}, got {cell}")


def _check_action(action: int) -> int:
    if isinstance(action, bool) or not hasattr(action, "__index__"):
        raise TypeError(f"an action is an int, got {type(action).__name__}")
    action = int(action)
    if not 0 <= action < N_ACTIONS:
        raise ValueError(f"action {action} is out of range 0..{N_ACTIONS - 1}")
    return action
