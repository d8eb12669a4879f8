"""One game's state as a plain JSON-ready dict, and its strict validation on the way back.

The dict holds the keys of the recorded states in ``tests/data/vectors`` (``to_move``,
``pending_leather``, ``position``, ``buttons``, ``income``, ``quilt``, ``bonus_owner``,
``circle``) plus ``first_to_finish``, ``cell_patches`` (which patch covers each cell, so
pictures keep their colours) and ``rules``. :func:`state_from_dict` accepts the recorded
form too (the extra keys are optional) and refuses anything impossible with a message
that names the field.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .actions import N_CELLS
from .kernels import STATE_DTYPE
from .patches import LEATHER_ID, N_PATCHES, PATCHES
from .rules import Rules, get_rules
from .tables import bonus_masks, cells_to_words, words_to_cells

REQUIRED_KEYS = ("to_move", "pending_leather", "position", "buttons", "income", "quilt",
                 "bonus_owner", "circle")
OPTIONAL_KEYS = ("first_to_finish", "cell_patches", "rules")


def state_to_dict(record: np.void, rules: Rules) -> dict[str, Any]:
    """The dict form of one record of ``STATE_DTYPE``."""
    n = int(record["circle_len"])
    to_move = int(record["to_move"])
    return {
        "to_move": None if to_move < 0 else to_move,
        "pending_leather": int(record["pending_leather"]),
        "position": record["position"].tolist(),
        "buttons": record["buttons"].tolist(),
        "income": record["income"].tolist(),
        "quilt": [_quilt_string(record["quilt"][p]) for p in range(2)],
        "bonus_owner": int(record["bonus_owner"]),
        "circle": record["circle"][:n].tolist(),
        "first_to_finish": int(record["first_to_finish"]),
        "cell_patches": record["cell_patches"].tolist(),
        "rules": rules.to_dict(),
    }


def _quilt_string(words: np.ndarray) -> str:
    covered = set(words_to_cells(int(words[0]), int(words[1])))
    return "".join("1" if c in covered else "0" for c in range(N_CELLS))


class _Fields:
    """Reads fields of a state dict, raising errors that name the field."""

    def __init__(self, d: dict[str, Any]) -> None:
        self.d = d

    def int(self, key: str, lo: int, hi: int, value: Any = None) -> int:
        v = self.d[key] if value is None else value
        if isinstance(v, bool) or not isinstance(v, int | np.integer):
            raise TypeError(f"state field {key!r} must be an int, got {v!r}")
        if not lo <= v <= hi:
            raise ValueError(f"state field {key!r} must be in {lo}..{hi}, got {v}")
        return int(v)

    def pair(self, key: str, lo: int, hi: int) -> list[int]:
        v = self.d[key]
        if not isinstance(v, list | tuple) or len(v) != 2:
            raise ValueError(f"state field {key!r} must be a list of two values, got {v!r}")
        return [self.int(key, lo, hi, x) for x in v]


def state_from_dict(d: dict[str, Any], rules: str | Rules | None = None
                    ) -> tuple[np.ndarray, Rules]:
    """A one-game state array and its rules from a dict; ``ValueError`` if impossible."""
    if not isinstance(d, dict):
        raise TypeError(f"a state must be a dict, got {type(d).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in d]
    if missing:
        raise ValueError(f"state dict lacks the keys {missing}")
    unknown = sorted(set(d) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS))
    if unknown:
        raise ValueError(f"state dict has unknown keys {unknown}")
    rules = get_rules(d.get("rules", "default") if rules is None else rules)
    f = _Fields(d)
    end = rules.track_end
    position = f.pair("position", 0, end)
    buttons = f.pair("buttons", 0, 32767)
    income = f.pair("income", 0, sum(p.income for p in PATCHES))
    bonus_owner = f.int("bonus_owner", -1, 1)
    pending = f.int("pending_leather", 0, len(rules.leather_positions))
    to_move = -1 if d["to_move"] is None else f.int("to_move", 0, 1)
    quilts = _read_quilts(d["quilt"])
    circle = _read_circle(d["circle"])

    both_done = position[0] == end and position[1] == end
    if to_move < 0 and not (both_done and pending == 0):
        raise ValueError("to_move is None but the game is not over (both tokens must be on "
                         f"space {end} with no leather pending)")
    if to_move >= 0 and both_done and pending == 0:
        raise ValueError(f"to_move must be None: both tokens are on the last space {end}")
    if to_move >= 0 and pending == 0 and position[to_move] > position[1 - to_move]:
        raise ValueError(f"to_move={to_move} but that player is ahead on the time track "
                         f"(positions {position})")
    if pending and len(words_to_cells(*quilts[to_move])) == N_CELLS:
        raise ValueError("pending_leather > 0 but the quilt of the player to move is full")

    first = _read_first_to_finish(d, f, position, end)
    _check_bonus(quilts, bonus_owner, rules)
    cell_patches = _read_cell_patches(d, quilts, circle, income)
    _check_totals(quilts, circle, income, position, pending, rules)

    state = np.zeros(1, STATE_DTYPE)
    s = state[0]
    for p in range(2):
        s["quilt"][p] = quilts[p]
    s["cell_patches"] = cell_patches
    s["buttons"] = buttons
    s["position"] = position
    s["income"] = income
    s["circle"][:] = -1
    s["circle"][: len(circle)] = circle
    s["circle_len"] = len(circle)
    s["to_move"] = to_move
    s["pending_leather"] = pending
    s["bonus_owner"] = bonus_owner
    s["first_to_finish"] = first
    return state, rules


def _read_quilts(value: Any) -> list[tuple[int, int]]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise ValueError("state field 'quilt' must be a list of two 81-character strings")
    quilts = []
    for p, q in enumerate(value):
        if not isinstance(q, str) or len(q) != N_CELLS or set(q) - {"0", "1"}:
            raise ValueError(f"quilt of player {p} must be {N_CELLS} characters of 0/1")
        quilts.append(cells_to_words([c for c, ch in enumerate(q) if ch == "1"]))
    return quilts


def _read_circle(value: Any) -> list[int]:
    if not isinstance(value, list | tuple):
        raise ValueError("state field 'circle' must be a list of patch ids")
    ids = [_Fields({"circle": x}).int("circle", 0, N_PATCHES - 1) for x in value]
    if len(set(ids)) != len(ids):
        raise ValueError(f"state field 'circle' repeats a patch id: {ids}")
    return ids


def _read_first_to_finish(d: dict[str, Any], f: _Fields, position: list[int], end: int) -> int:
    finished = [p for p in range(2) if position[p] == end]
    if "first_to_finish" not in d:
        if len(finished) == 2:
            raise ValueError("first_to_finish is needed when both tokens are on the last space")
        return finished[0] if finished else -1
    first = f.int("first_to_finish", -1, 1)
    if (first < 0) != (not finished) or (first >= 0 and first not in finished):
        raise ValueError(f"first_to_finish={first} does not match positions {position}")
    return first


def _check_bonus(quilts: list[tuple[int, int]], owner: int, rules: Rules) -> None:
    squares = bonus_masks(rules.bonus_size)
    has_square = [
        any((q[0] & int(m[0])) == int(m[0]) and (q[1] & int(m[1])) == int(m[1]) for m in squares)
        for q in quilts
    ]
    if owner >= 0 and not has_square[owner]:
        raise ValueError(f"bonus_owner={owner} but that quilt has no full "
                         f"{rules.bonus_size}x{rules.bonus_size} square")
    if owner < 0 and any(has_square):
        raise ValueError("a quilt has a full bonus square but bonus_owner is -1")


def _read_cell_patches(d: dict[str, Any], quilts: list[tuple[int, int]], circle: list[int],
                       income: list[int]) -> np.ndarray:
    """Which patch covers each cell; unknown (0) patches if the dict does not say."""
    cell_patches = np.full((2, N_CELLS), -1, np.int8)
    if "cell_patches" not in d:
        for p in range(2):
            cell_patches[p, words_to_cells(*quilts[p])] = LEATHER_ID  # unknown: plain cells
        return cell_patches
    value = np.asarray(d["cell_patches"])
    if value.shape != (2, N_CELLS) or value.dtype.kind not in "iu":
        raise ValueError("state field 'cell_patches' must be two lists of 81 ints")
    if value.min() < -1 or value.max() > LEATHER_ID:
        raise ValueError(f"state field 'cell_patches' holds ids outside -1..{LEATHER_ID}")
    for p in range(2):
        if sorted(np.flatnonzero(value[p] >= 0).tolist()) != words_to_cells(*quilts[p]):
            raise ValueError(f"cell_patches of player {p} do not cover the cells of its quilt")
        earned = 0
        for pid in set(value[p].tolist()) - {-1, LEATHER_ID}:
            if pid in circle or pid in value[1 - p]:
                raise ValueError(f"patch {pid} is on a quilt and also elsewhere")
            if int((value[p] == pid).sum()) != PATCHES[pid].size:
                raise ValueError(f"patch {pid} covers the wrong number of cells")
            earned += PATCHES[pid].income
        if earned != income[p]:
            raise ValueError(f"income of player {p} is {income[p]} but its patches earn {earned}")
    cell_patches[:] = value
    return cell_patches


def _check_totals(quilts: list[tuple[int, int]], circle: list[int], income: list[int],
                  position: list[int], pending: int, rules: Rules) -> None:
    bought = [p for p in PATCHES if p.id not in circle]
    if sum(income) != sum(p.income for p in bought):
        raise ValueError(f"incomes {income} do not add up to the income of the "
                         f"{len(bought)} patches bought")
    covered = sum(len(words_to_cells(*q)) for q in quilts)
    leathers = covered - sum(p.size for p in bought)
    taken = sum(1 for x in rules.leather_positions if x <= max(position))
    if not 0 <= leathers <= taken - pending:
        raise ValueError(f"the quilts cover {covered} cells, which does not match the patches "
                         f"bought and the {taken} leather patches taken from the track")
