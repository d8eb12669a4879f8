"""One game's state as a plain JSON-ready dict, and its strict validation on the way back.

The dict holds the keys of the recorded states in ``tests/data/vectors`` (``to_move``,
``pending_leather``, ``position``, ``buttons``, ``income``, ``quilt``, ``bonus_owner``,
``circle``) plus ``first_to_finish``, ``cell_patches`` (which patch covers each cell, so
pictures keep their colours) and ``rules``. :func:`state_to_dict` leaves ``cell_patches``
out when the state does not know them (a game rebuilt from the recorded form).

:func:`state_from_dict` accepts the recorded form too (the extra keys are optional) and
refuses, with ``TypeError`` (wrong kind of value) or ``ValueError`` (impossible value) and
a message naming the fields involved, any state that no game under the rules can reach.
"Possible" is defined, invariant by invariant, in :mod:`patchwork_env.engine.possible_states`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from patchwork_env.data.actions import N_CELLS
from patchwork_env.data.patches import FIRST_PATCH_ID, LEATHER_ID, N_PATCHES, PATCHES, Patch
from patchwork_env.data.rules import Rules, get_rules
from patchwork_env.data.tables import WORD_BITS
from patchwork_env.engine.kernels import STATE_DTYPE
from patchwork_env.engine.possible_states import (
    PLACEMENTS,
    TOTAL_INCOME,
    WORD,
    Track,
    cells_of,
    check_bonus,
    check_economy,
    check_recorded,
    check_turn,
    disagree,
    max_buttons,
)

REQUIRED_KEYS = ("to_move", "pending_leather", "position", "buttons", "income", "quilt",
                 "bonus_owner", "circle")
OPTIONAL_KEYS = ("first_to_finish", "cell_patches", "rules")







def state_to_dict(record: np.void, rules: Rules) -> dict[str, Any]:
    """The dict form of one record of ``STATE_DTYPE``."""
    n = int(record["circle_len"])
    to_move = int(record["to_move"])
    circle = record["circle"][:n].tolist()
    d = {
        "to_move": None if to_move < 0 else to_move,
        "pending_leather": int(record["pending_leather"]),
        "position": record["position"].tolist(),
        "buttons": record["buttons"].tolist(),
        "income": record["income"].tolist(),
        "quilt": [_quilt_string(record["quilt"][p]) for p in range(2)],
        "bonus_owner": int(record["bonus_owner"]),
        "circle": circle,
        "first_to_finish": int(record["first_to_finish"]),
        "cell_patches": record["cell_patches"].tolist(),
        "rules": rules.to_dict(),
    }
    ids = record["cell_patches"]
    on_quilts = set(ids[(ids >= 0) & (ids < LEATHER_ID)].tolist())
    if not set(range(N_PATCHES)) - set(circle) <= on_quilts:
        del d["cell_patches"]  # rebuilt from the recorded form: the patches are not known
    return d


def _quilt_string(words: np.ndarray) -> str:
    bits = int(words[0]) | int(words[1]) << WORD_BITS
    return format(bits, f"0{N_CELLS}b")[::-1]






class _Fields:
    """Reads fields of a state dict, raising errors that name the field."""

    def __init__(self, d: dict[str, Any]) -> None:
        self.d = d

    def int(self, key: str, lo: int, hi: int, value: Any = None) -> int:
        v = self.d[key] if value is None else value
        if isinstance(v, bool) or not isinstance(v, int | np.integer):
            raise TypeError(f"state field {key!r} must be an int, got {type(v).__name__} {v!r}")
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
    """A one-game state array and its rules from a dict; ``ValueError`` (or ``TypeError``
    for a value of the wrong kind) naming the fields if the state is impossible."""
    if not isinstance(d, dict):
        raise TypeError(f"a state must be a dict, got {type(d).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in d]
    if missing:
        raise ValueError(f"state dict lacks the keys {missing}")
    unknown = sorted(set(d) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS), key=repr)
    if unknown:
        raise ValueError(f"state dict has unknown keys {unknown}")
    rules = _read_rules(d, rules)
    f = _Fields(d)
    end = rules.track_end
    position = f.pair("position", 0, end)
    buttons = f.pair("buttons", 0, max_buttons(rules))
    income = f.pair("income", 0, TOTAL_INCOME)
    bonus_owner = f.int("bonus_owner", -1, 1)
    pending = f.int("pending_leather", 0, len(rules.leather_positions))
    to_move = -1 if d["to_move"] is None else f.int("to_move", 0, 1)
    quilts = _read_quilts(d["quilt"])
    circle = _read_circle(d["circle"])

    check_turn(position, to_move, pending, quilts, rules)
    first = _read_first_to_finish(d, f, position, end)
    check_bonus(quilts, bonus_owner, rules)
    track = Track.of(rules, position, to_move, pending)
    covered = [q.bit_count() for q in quilts]
    full = (covered[0] == N_CELLS, covered[1] == N_CELLS)
    if "cell_patches" in d:
        cell_patches, owned = _read_cell_patches(d["cell_patches"], quilts, circle, income)
        placed = (int((cell_patches[0] == LEATHER_ID).sum()),
                  int((cell_patches[1] == LEATHER_ID).sum()))
        if not track.possible(placed, full):
            raise disagree(("cell_patches", "position", "pending_leather", "to_move"),
                            f"the quilts hold {list(placed)} leather patches, which the "
                            f"leather spaces {list(rules.leather_positions)} passed by the "
                            f"tokens (positions {position}, {pending} pending) cannot give")
        check_economy(owned, buttons, position, income, rules, "cell_patches")
    else:
        cell_patches = np.full((2, N_CELLS), -1, np.int8)
        for p in range(2):
            cell_patches[p, cells_of(quilts[p])] = LEATHER_ID  # unknown: plain cells
        check_recorded(covered, full, circle, income, position, track)
        bought = [PATCHES[i] for i in range(N_PATCHES) if i not in circle]
        check_economy([bought], buttons, position, income, rules, "circle")

    state = np.zeros(1, STATE_DTYPE)
    s = state[0]
    for p in range(2):
        s["quilt"][p] = (quilts[p] & WORD, quilts[p] >> WORD_BITS)
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


def _read_rules(d: dict[str, Any], rules: Any, get: Callable[[Any], Any] = get_rules) -> Any:
    """The rules of a state dict (``get`` resolves a game's rules; Patchwork's by default):
    its own ``rules`` field, which must agree with ``rules`` where both are given."""
    given = None if rules is None else get(rules)
    if "rules" not in d:
        return get("default") if given is None else given
    try:
        stated = get(d["rules"])
    except (TypeError, ValueError) as e:
        raise type(e)(f"state field 'rules': {e}") from None
    if given is not None and given != stated:
        raise ValueError(f"state field 'rules' ({stated}) differs from the rules given ({given})")
    return stated


def _read_quilts(value: Any) -> list[int]:
    """Each quilt as one int, bit ``c`` set for a covered cell ``c``."""
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise ValueError("state field 'quilt' must be a list of two 81-character strings")
    quilts = []
    for p, q in enumerate(value):
        if not isinstance(q, str) or len(q) != N_CELLS or set(q) - {"0", "1"}:
            raise ValueError(f"state field 'quilt': the quilt of player {p} must be "
                             f"{N_CELLS} characters of 0/1")
        quilts.append(int(q[::-1], 2))
    return quilts




def _read_circle(value: Any) -> list[int]:
    if not isinstance(value, list | tuple):
        raise ValueError("state field 'circle' must be a list of patch ids")
    ids = [_Fields({"circle": x}).int("circle", 0, N_PATCHES - 1) for x in value]
    if len(set(ids)) != len(ids):
        raise ValueError(f"state field 'circle' repeats a patch id: {ids}")
    if len(ids) == N_PATCHES and ids[-1] != FIRST_PATCH_ID:
        raise ValueError(f"state field 'circle' holds all {N_PATCHES} patches, so none was "
                         f"bought and patch {FIRST_PATCH_ID} must still be last, got {ids}")
    return ids




def _read_first_to_finish(d: dict[str, Any], f: _Fields, position: list[int], end: int) -> int:
    finished = [p for p in range(2) if position[p] == end]
    if "first_to_finish" not in d:
        if len(finished) == 2:
            raise ValueError("state field 'first_to_finish' is needed when both tokens are on "
                             "the last space")
        return finished[0] if finished else -1
    first = f.int("first_to_finish", -1, 1)
    if (first < 0) != (not finished) or (first >= 0 and first not in finished):
        raise disagree(("first_to_finish", "position"),
                        f"first_to_finish={first} does not match positions {position}")
    return first




def _read_cell_patches(value: Any, quilts: list[int], circle: list[int],
                       income: list[int]) -> tuple[np.ndarray, list[list[Patch]]]:
    """Which patch covers each cell, checked against the quilts, the circle and the
    incomes; and the patches on each quilt."""
    try:
        ids = np.asarray(value)
    except (TypeError, ValueError):  # ragged lists
        ids = np.asarray(None)
    if ids.shape != (2, N_CELLS) or ids.dtype.kind not in "iu":
        raise ValueError("state field 'cell_patches' must be two lists of 81 ints")
    if ids.min() < -1 or ids.max() > LEATHER_ID:
        raise ValueError(f"state field 'cell_patches' holds ids outside -1..{LEATHER_ID}")
    rows = ids.tolist()
    spots: list[dict[int, int]] = [{}, {}]  # patch id -> its cells, bit c for cell c
    for p in range(2):
        covered = 0
        for c, pid in enumerate(rows[p]):
            if pid >= 0:
                covered |= 1 << c
                spots[p][pid] = spots[p].get(pid, 0) | 1 << c
        if covered != quilts[p]:
            raise disagree(("cell_patches", "quilt"),
                            f"cell_patches of player {p} do not cover the cells of its quilt")
    owned: list[list[Patch]] = [[], []]
    for p in range(2):
        for pid, bits in sorted(spots[p].items()):
            if pid == LEATHER_ID:
                continue
            if pid in circle or pid in spots[1 - p]:
                where = "in the circle" if pid in circle else "on both quilts"
                raise disagree(("cell_patches", "circle"),
                                f"patch {pid} is on a quilt and also elsewhere ({where})")
            if bits not in PLACEMENTS[pid]:
                raise ValueError(f"state field 'cell_patches': the cells {cells_of(bits)} of "
                                 f"patch {pid} on the quilt of player {p} are not its shape "
                                 f"{PATCHES[pid].shape!r} in any orientation")
            owned[p].append(PATCHES[pid])
        earned = sum(patch.income for patch in owned[p])
        if earned != income[p]:
            raise disagree(("income", "cell_patches"),
                            f"income of player {p} is {income[p]} but its patches earn {earned}")
    lost = sorted(set(range(N_PATCHES)) - set(circle) - {patch.id for q in owned for patch in q})
    if lost:
        raise disagree(("circle", "cell_patches"),
                        f"patches {lost} are neither in the circle nor on a quilt")
    return ids.astype(np.int8), owned




