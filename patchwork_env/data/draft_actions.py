"""The ``Discrete(1947)`` action space of Patchwork Draft: layout, decoding, notation.

Rule 13.9 of the rules page (docs/rules.md). A buy is encoded, decoded and written exactly
as in the main game (rule 11, :mod:`patchwork_env.data.actions`), so the two games share
their buy actions and placement tables; the three discards take the place of advance.

=============  ==========================================================================
action         meaning
=============  ==========================================================================
0 .. 1943      buy: ``slot * 648 + orientation * 81 + anchor`` (rule 11.2)
1944 .. 1946   discard the patch of slot ``action - 1944`` (rule 13.6)
=============  ==========================================================================

Notation: ``buy slot 1 o3 at c4``, ``discard slot 2``.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from patchwork_env.data.actions import (
    N_BUY_ACTIONS,
    N_SLOTS,
    Buy,
    decode_action,
    format_action,
    parse_action,
)

DISCARD_BASE = N_BUY_ACTIONS  # 1944
N_DRAFT_ACTIONS = DISCARD_BASE + N_SLOTS  # 1947


class Discard(NamedTuple):
    """A decoded discard."""

    slot: int


DraftMove = Buy | Discard


def encode_discard(slot: int) -> int:
    """Rule 13.9: the action that discards the patch of ``slot``."""
    if isinstance(slot, bool) or not isinstance(slot, int) or not 0 <= slot < N_SLOTS:
        raise ValueError(f"slot must be in 0..{N_SLOTS - 1}, got {slot!r}")
    return DISCARD_BASE + slot


def decode_draft_action(action: int) -> DraftMove:
    """Rule 13.9: split an action id into :class:`~patchwork_env.data.actions.Buy` or
    :class:`Discard`."""
    action = check_draft_action_id(action)
    if action >= DISCARD_BASE:
        return Discard(action - DISCARD_BASE)
    return decode_action(action)


def format_draft_action(action: int) -> str:
    """Rule 13.9: ``buy slot 1 o3 at c4`` or ``discard slot 2``."""
    move = decode_draft_action(action)
    if isinstance(move, Discard):
        return f"discard slot {move.slot}"
    return format_action(action)


_DISCARD_RE = re.compile(r"discard\s+slot\s+(\d+)")


def parse_draft_action(text: str) -> int:
    """Read the notation of :func:`format_draft_action` (or a bare action id) back to an
    id."""
    if not isinstance(text, str):
        raise TypeError(f"expected a move as text, got {type(text).__name__}")
    s = " ".join(text.strip().lower().split())
    if s.isdigit():
        return check_draft_action_id(int(s))
    if m := _DISCARD_RE.fullmatch(s):
        return encode_discard(int(m.group(1)))
    if s.startswith("buy"):
        return parse_action(s)
    raise ValueError(f"cannot read move {text!r}: expected 'buy slot S oO at CELL', "
                     "'discard slot S' or an action id")


def check_draft_action_id(action: int) -> int:
    """``action`` as an int in ``0..1946``; ``TypeError`` unless an int, ``ValueError``
    when out of range."""
    if isinstance(action, bool) or not hasattr(action, "__index__"):
        raise TypeError(f"an action is an int, got {type(action).__name__}")
    action = int(action)
    if not 0 <= action < N_DRAFT_ACTIONS:
        raise ValueError(f"action {action} is out of range 0..{N_DRAFT_ACTIONS - 1}")
    return action
