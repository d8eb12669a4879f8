"""One draft game's state as a JSON-ready dict, and its strict validation on the way back.

The dict holds ``to_move`` (None once over), ``first_player``, ``buttons``, ``points``,
``quilt`` (two 81-character 0/1 strings, as in the main game), ``row`` (the three face-up
patch ids, None for a slot emptied at the end), ``deck`` (the face-down deck from the
top: the whole state, hidden order included), ``cell_patches`` (which patch covers each
cell) and ``rules``. :func:`draft_state_to_dict` leaves ``cell_patches`` out when the
state does not know them (a hand-built position).

:func:`draft_state_from_dict` refuses, with ``TypeError`` (wrong kind of value) or
``ValueError`` (impossible value) naming the fields, any state no draft game can reach:

- each field on its own: seats 0 or 1, buttons and points in range, patch ids 0..32, each
  patch at most once across the row and the deck;
- the turn: a game goes on only with three face-up patches, some player able to buy some
  patch still in the game (rule 13.7), and the player whose turn it is after the turns
  played so far (one patch leaves the row and deck per turn, rule 13.3); a slot is empty
  only once the deck is;
- the quilts: each line (row or column) full on a quilt scored a point and a button
  (rule 13.4), so points >= full lines and buttons <= start + full lines; the quilt is
  no larger than the patches gone from the row and deck. With ``cell_patches``, exactly:
  each patch gone lies on at most one quilt, in one of its shapes; each player's buttons
  are the start, plus the full lines, less the patches' costs; the points are the full
  lines plus that quilt's starred patches on star squares (rule 13.5).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from patchwork_env.data.actions import N_CELLS, N_SLOTS
from patchwork_env.data.draft_rules import DraftRules, get_draft_rules
from patchwork_env.data.patches import LEATHER_ID, N_PATCHES, PATCHES
from patchwork_env.engine.draft_batch_kernels import buyers_one
from patchwork_env.engine.draft_kernels import DRAFT_STATE_DTYPE, LINE_MASKS
from patchwork_env.engine.possible_states import PLACEMENTS, WORD, cells_of, disagree
from patchwork_env.engine.serialize import _Fields, _quilt_string, _read_quilts, _read_rules

REQUIRED_KEYS = ("to_move", "first_player", "buttons", "points", "quilt", "row", "deck")
OPTIONAL_KEYS = ("cell_patches", "rules")
UNKNOWN_PATCH = LEATHER_ID
"""The id a hand-built position writes on a covered cell whose patch it does not name."""

_LINES = [int(lo) | int(hi) << 64 for lo, hi in LINE_MASKS]
_MAX_LINES = len(_LINES)


def draft_state_to_dict(record: np.void, rules: DraftRules) -> dict[str, Any]:
    """The dict form of one record of ``DRAFT_STATE_DTYPE``."""
    to_move = int(record["to_move"])
    d = {
        "to_move": None if to_move < 0 else to_move,
        "first_player": int(record["first_player"]),
        "buttons": record["buttons"].tolist(),
        "points": record["points"].tolist(),
        "quilt": [_quilt_string(record["quilt"][p]) for p in range(2)],
        "row": [None if x < 0 else x for x in record["row"].tolist()],
        "deck": record["deck"][int(record["drawn"]):].tolist(),
        "cell_patches": record["cell_patches"].tolist(),
        "rules": rules.to_dict(),
    }
    if (record["cell_patches"] == UNKNOWN_PATCH).any():
        del d["cell_patches"]
    return d


def draft_state_from_dict(d: dict[str, Any], rules: str | DraftRules | None = None
                          ) -> tuple[np.ndarray, DraftRules]:
    """A one-game state array and its rules from a dict; ``ValueError`` (``TypeError`` for
    a value of the wrong kind) naming the fields if no draft game can reach it."""
    if not isinstance(d, dict):
        raise TypeError(f"a state must be a dict, got {type(d).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in d]
    if missing:
        raise ValueError(f"state dict lacks the keys {missing}")
    unknown = sorted(set(d) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS), key=repr)
    if unknown:
        raise ValueError(f"state dict has unknown keys {unknown}")
    rules = _read_rules(d, rules, get_draft_rules)
    f = _Fields(d)
    to_move = -1 if d["to_move"] is None else f.int("to_move", 0, 1)
    first = f.int("first_player", 0, 1)
    buttons = f.pair("buttons", 0, rules.start_buttons + _MAX_LINES)
    points = f.pair("points", 0, _MAX_LINES + N_PATCHES)
    quilts = _read_quilts(d["quilt"])
    row = _read_ids(d["row"], "row", exact=N_SLOTS, empty_ok=True)
    deck = _read_ids(d["deck"], "deck")
    shared = set(deck) & {x for x in row if x is not None}
    if shared:
        raise disagree(("row", "deck"), f"patches {sorted(shared)} are in both")
    gone = sorted(set(range(N_PATCHES)) - set(deck) - set(row))
    turns = _check_turns(to_move, first, row, deck)
    lines = [sum(q & line == line for line in _LINES) for q in quilts]
    for p in range(2):
        if points[p] < lines[p]:
            raise disagree(("points", "quilt"), f"player {p} has {lines[p]} full rows and "
                           f"columns, each worth a point, but {points[p]} points")
        if buttons[p] > rules.start_buttons + lines[p]:
            raise disagree(("buttons", "quilt"), f"player {p} has {buttons[p]} buttons, more "
                           f"than the start and one per full row and column")
        starred = sum(1 for x in gone if x in rules.starred_patches)
        if points[p] - lines[p] > starred:
            raise disagree(("points", "row", "deck"), f"player {p} has more star points "
                           f"than starred patches have left the row and deck")
    if sum(q.bit_count() for q in quilts) > sum(PATCHES[x].size for x in gone):
        raise disagree(("quilt", "row", "deck"),
                       "the quilts cover more cells than the patches gone from the row "
                       "and deck")
    if "cell_patches" in d:
        cell_patches = _read_cell_patches(d["cell_patches"], quilts, gone, turns)
        _check_economy(cell_patches, buttons, points, lines, rules)
    else:
        cell_patches = np.full((2, N_CELLS), -1, np.int8)
        for p in range(2):
            cell_patches[p, cells_of(quilts[p])] = UNKNOWN_PATCH

    state = np.zeros(1, DRAFT_STATE_DTYPE)
    s = state[0]
    for p in range(2):
        s["quilt"][p] = (quilts[p] & WORD, quilts[p] >> 64)
    s["cell_patches"] = cell_patches
    s["buttons"] = buttons
    s["points"] = points
    s["row"] = [-1 if x is None else x for x in row]
    s["deck"][:] = -1
    s["deck"][N_PATCHES - len(deck):] = deck
    s["drawn"] = N_PATCHES - len(deck)
    s["first_player"] = first
    s["to_move"] = to_move
    _check_buyers(state, to_move, row)
    return state, rules


def _read_ids(value: Any, key: str, exact: int | None = None, empty_ok: bool = False
              ) -> list[int | None]:
    """A list of distinct patch ids (``None`` allowed where ``empty_ok``)."""
    if not isinstance(value, list | tuple) or (exact is not None and len(value) != exact):
        size = f"{exact} " if exact is not None else ""
        raise ValueError(f"state field {key!r} must be a list of {size}patch ids, got {value!r}")
    ids = [None if x is None and empty_ok else _Fields({key: x}).int(key, 0, N_PATCHES - 1)
           for x in value]
    named = [x for x in ids if x is not None]
    if len(set(named)) != len(named):
        raise ValueError(f"state field {key!r} repeats a patch id: {ids}")
    return ids


def _check_turns(to_move: int, first: int, row: list[int | None], deck: list[int]) -> int:
    """Rules 13.3 and 13.7: the turns played so far, checked against the row and the turn."""
    empty = sum(x is None for x in row)
    if empty > 1 or (empty and deck):
        raise disagree(("row", "deck"), "a slot empties only at the refill that finds the "
                       "deck empty, which ends the game")
    if empty and to_move >= 0:
        raise disagree(("to_move", "row"), "the game goes on with an empty slot")
    turns = N_PATCHES - N_SLOTS - len(deck) + empty
    if to_move >= 0 and to_move != (first if turns % 2 == 0 else 1 - first):
        raise disagree(("to_move", "first_player", "deck"),
                       f"after {turns} turns begun by player {first}, player {to_move} "
                       "cannot be the one to move")
    return turns


def _check_buyers(state: np.ndarray, to_move: int, row: list[int | None]) -> None:
    """Rule 13.7 (b): a game goes on only while some player can buy some patch still in
    the game; a game over with a full row ended because no player could."""
    buyers = buyers_one(state, 0)
    if to_move >= 0 and buyers == 0:
        raise disagree(("to_move", "row", "deck", "buttons", "quilt"),
                       "no player can buy any patch still in the game, so the game is over")
    if to_move < 0 and None not in row and buyers != 0:
        raise disagree(("to_move", "row", "deck", "buttons", "quilt"),
                       "the game is over with no slot empty, yet a player can still buy a "
                       "patch in the game")


def _read_cell_patches(value: Any, quilts: list[int], gone: list[int], turns: int
                       ) -> np.ndarray:
    """Which patch covers each cell, checked against the quilts and the patches gone."""
    try:
        ids = np.asarray(value)
    except (TypeError, ValueError):  # ragged lists
        ids = np.asarray(None)
    if ids.shape != (2, N_CELLS) or ids.dtype.kind not in "iu":
        raise ValueError("state field 'cell_patches' must be two lists of 81 ints")
    if ids.min() < -1 or ids.max() >= N_PATCHES:
        raise ValueError(f"state field 'cell_patches' holds ids outside -1..{N_PATCHES - 1}")
    placed = 0
    for p in range(2):
        if sum(1 << c for c in range(N_CELLS) if ids[p, c] >= 0) != quilts[p]:
            raise disagree(("cell_patches", "quilt"),
                           f"cell_patches of player {p} do not cover the cells of its quilt")
        for pid in set(ids[p][ids[p] >= 0].tolist()):
            if pid not in gone or pid in ids[1 - p]:
                where = "on both quilts" if pid in ids[1 - p] else "in the row or deck"
                raise disagree(("cell_patches", "row", "deck"),
                               f"patch {pid} is on a quilt and also {where}")
            bits = sum(1 << int(c) for c in np.flatnonzero(ids[p] == pid))
            if bits not in PLACEMENTS[pid]:
                raise ValueError(f"state field 'cell_patches': the cells {cells_of(bits)} of "
                                 f"patch {pid} on the quilt of player {p} are not its shape "
                                 f"{PATCHES[pid].shape!r} in any orientation")
            placed += 1
    if placed > turns:
        raise disagree(("cell_patches", "deck"),
                       f"{placed} patches are on the quilts after only {turns} turns")
    return ids.astype(np.int8)


def _check_economy(cell_patches: np.ndarray, buttons: list[int], points: list[int],
                   lines: list[int], rules: DraftRules) -> None:
    """Rules 13.2, 13.4 and 13.5, exactly: buttons = start + full lines - costs, points =
    full lines + starred patches on star squares."""
    for p in range(2):
        own = set(cell_patches[p][cell_patches[p] >= 0].tolist())
        expected = rules.start_buttons + lines[p] - sum(PATCHES[x].cost for x in own)
        if buttons[p] != expected:
            raise disagree(("buttons", "cell_patches"),
                           f"player {p} has {buttons[p]} buttons, but the start, the full "
                           f"rows and columns and the patches bought leave {expected}")
        stars = sum(1 for x in own if x in rules.starred_patches
                    and any(cell_patches[p, c] == x for c in rules.star_squares))
        if points[p] != lines[p] + stars:
            raise disagree(("points", "cell_patches"),
                           f"player {p} has {points[p]} points, but the full rows and "
                           f"columns and the starred patches on star squares give "
                           f"{lines[p] + stars}")
