"""One game's state as a plain JSON-ready dict, and its strict validation on the way back.

The dict holds the keys of the recorded states in ``tests/data/vectors`` (``to_move``,
``pending_leather``, ``position``, ``buttons``, ``income``, ``quilt``, ``bonus_owner``,
``circle``) plus ``first_to_finish``, ``cell_patches`` (which patch covers each cell, so
pictures keep their colours) and ``rules``. :func:`state_to_dict` leaves ``cell_patches``
out when the state does not know them (a game rebuilt from the recorded form).

:func:`state_from_dict` accepts the recorded form too (the extra keys are optional) and
refuses, with ``TypeError`` (wrong kind of value) or ``ValueError`` (impossible value) and
a message naming the fields involved, any state that no game under the rules can reach.
"Possible" means every invariant below holds; each is kept by every move, so a state
accepted here plays on to its end without any of them breaking, and no field can overflow
its storage (the bounds lie far inside ``int8``/``int16``).

Each field on its own:

- ``position``: each token on a space ``0..track_end``.
- ``buttons``: each in ``0..max_buttons(rules)`` (the start, one button per space of the
  track, and the income of all 33 patches at every income space: 400 by default).
- ``income``: each in ``0..38`` (the income of all patches); ``bonus_owner`` -1, 0 or 1;
  ``pending_leather`` ``0..`` the number of leather spaces; ``to_move`` None, 0 or 1;
  ``quilt`` two 81-character 0/1 strings; ``circle`` distinct patch ids, and with all 33
  patches (nothing bought yet) patch 0 last.

Turn and end:

- ``to_move`` is None exactly when both tokens are on the last space with no leather
  pending. Without pending leather the player to move is not ahead (on a shared space the
  one who arrived last moves: the dict cannot tell who that was, so either is accepted).
- ``pending_leather`` > 0 only for the player to move, who must just have passed that many
  leather spaces ahead of the other token (so he is ahead), on a quilt with an empty cell.
- ``first_to_finish`` is -1 while no token is on the last space, the player there when one
  is, either when both are (and required then).

Quilts and patches:

- ``bonus_owner`` has a full bonus square; nobody has one while it is -1.
- With ``cell_patches``: they cover exactly the quilt's cells; each patch id lies on at
  most one quilt, on cells forming the patch in one of its orientations; the circle holds
  exactly the patches on no quilt; each income is the income of that quilt's patches.
- Leather patches: one was taken for each leather space some token has passed; the one
  only the leading token passed went to its player; each taken patch is on its taker's
  quilt, pending, or was discarded on a full quilt. So a player with an empty cell holds
  exactly the leather patches he took, less the pending ones.
- Without ``cell_patches`` (the recorded form) the patches bought (those not in the
  circle) must be shareable between the players so that each gets his income and, with
  the leather patches he can have taken, his number of covered cells (counts only: the
  cells are not tiled).

Time and buttons (patch times, costs and income are those of the patches bought):

- A player's patches take no more time than his token has moved (the last one may be cut
  short by the end of the track).
- ``buttons + cost of the patches bought`` is the start, plus one per space advanced (the
  spaces moved less the patches' time, give or take what the end of the track cut off),
  plus at most the income times the income spaces passed. Without ``cell_patches`` this
  is checked for both players together, and each player's buttons are at most the start
  plus his position plus his income times the income spaces passed.
"""

from __future__ import annotations

from functools import cache
from typing import Any, NamedTuple

import numpy as np

from .actions import N_CELLS
from .kernels import STATE_DTYPE
from .patches import FIRST_PATCH_ID, LEATHER_ID, N_PATCHES, PATCHES, Patch
from .rules import Rules, get_rules
from .tables import LIST_MASK, LIST_START, WORD_BITS, bonus_masks

REQUIRED_KEYS = ("to_move", "pending_leather", "position", "buttons", "income", "quilt",
                 "bonus_owner", "circle")
OPTIONAL_KEYS = ("first_to_finish", "cell_patches", "rules")

TOTAL_INCOME = sum(p.income for p in PATCHES)
"""The income of all 33 patches together (38): no quilt earns more."""
_TIME_CUT = max(p.time for p in PATCHES) - 1
"""The most time the end of the track can cut from a player's last patch."""
_PLACEMENTS = [{int(lo) | int(hi) << WORD_BITS
                for lo, hi in LIST_MASK[LIST_START[p] : LIST_START[p + 1]]}
               for p in range(N_PATCHES)]
"""The cells (bit ``c`` for cell ``c``) of every placement of each patch, all orientations."""
_WORD = (1 << WORD_BITS) - 1


@cache
def _squares(size: int) -> tuple[int, ...]:
    """Every ``size`` x ``size`` square of the board, bit ``c`` for cell ``c``."""
    return tuple(int(lo) | int(hi) << WORD_BITS for lo, hi in bonus_masks(size))


def max_buttons(rules: Rules) -> int:
    """The most buttons a player can ever hold under ``rules``: the start, one button per
    space of the track and the income of every patch at every income space."""
    return rules.start_buttons + rules.track_end + TOTAL_INCOME * len(rules.income_positions)


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


def _names(fields: tuple[str, ...]) -> str:
    quoted = [f"'{f}'" for f in fields]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _disagree(fields: tuple[str, ...], text: str) -> ValueError:
    return ValueError(f"state fields {_names(fields)} disagree: {text}")


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


class _Track(NamedTuple):
    """What the tokens' positions say about the leather patches taken from the track."""

    shared: int
    """Leather spaces both tokens have passed: taken by either player."""
    only: tuple[int, int]
    """Leather spaces only player p's token has passed: taken by p."""
    pending: tuple[int, int]
    """Leather patches player p still has to place."""

    @classmethod
    def of(cls, rules: Rules, position: list[int], to_move: int, pending: int) -> _Track:
        low = min(position)
        only = tuple(sum(1 for x in rules.leather_positions if position[1 - p] < x <= position[p])
                     for p in range(2))
        owed = tuple(pending if p == to_move else 0 for p in range(2))
        return cls(sum(1 for x in rules.leather_positions if x <= low), only, owed)

    @property
    def taken(self) -> int:
        return self.shared + sum(self.only)

    def possible(self, placed: tuple[int, int], full: tuple[bool, bool]) -> bool:
        """Whether the players can hold ``placed`` leather patches on their quilts."""
        # the shared spaces player p must have taken first to hold what he holds
        need = [placed[p] + self.pending[p] - self.only[p] for p in range(2)]
        if any(n < 0 and not f for n, f in zip(need, full, strict=True)):
            return False  # a quilt with room placed every patch it took
        if sum(max(n, 0) for n in need) > self.shared:
            return False
        return any(full) or sum(need) == self.shared


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

    _check_turn(position, to_move, pending, quilts, rules)
    first = _read_first_to_finish(d, f, position, end)
    _check_bonus(quilts, bonus_owner, rules)
    track = _Track.of(rules, position, to_move, pending)
    covered = [q.bit_count() for q in quilts]
    full = (covered[0] == N_CELLS, covered[1] == N_CELLS)
    if "cell_patches" in d:
        cell_patches, owned = _read_cell_patches(d["cell_patches"], quilts, circle, income)
        placed = (int((cell_patches[0] == LEATHER_ID).sum()),
                  int((cell_patches[1] == LEATHER_ID).sum()))
        if not track.possible(placed, full):
            raise _disagree(("cell_patches", "position", "pending_leather", "to_move"),
                            f"the quilts hold {list(placed)} leather patches, which the "
                            f"leather spaces {list(rules.leather_positions)} passed by the "
                            f"tokens (positions {position}, {pending} pending) cannot give")
        _check_economy(owned, buttons, position, income, rules, "cell_patches")
    else:
        cell_patches = np.full((2, N_CELLS), -1, np.int8)
        for p in range(2):
            cell_patches[p, _cells(quilts[p])] = LEATHER_ID  # unknown: plain cells
        _check_recorded(covered, full, circle, income, position, track)
        bought = [PATCHES[i] for i in range(N_PATCHES) if i not in circle]
        _check_economy([bought], buttons, position, income, rules, "circle")

    state = np.zeros(1, STATE_DTYPE)
    s = state[0]
    for p in range(2):
        s["quilt"][p] = (quilts[p] & _WORD, quilts[p] >> WORD_BITS)
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


def _read_rules(d: dict[str, Any], rules: str | Rules | None) -> Rules:
    given = None if rules is None else get_rules(rules)
    if "rules" not in d:
        return get_rules("default") if given is None else given
    try:
        stated = get_rules(d["rules"])
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


def _cells(bits: int) -> list[int]:
    return [c for c in range(N_CELLS) if bits >> c & 1]


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


def _check_turn(position: list[int], to_move: int, pending: int, quilts: list[int],
                rules: Rules) -> None:
    end = rules.track_end
    both_done = position[0] == end and position[1] == end
    if to_move < 0 and not (both_done and pending == 0):
        raise _disagree(("to_move", "position", "pending_leather"),
                        "to_move is None but the game is not over (both tokens must be on "
                        f"space {end} with no leather pending), positions {position}")
    if to_move >= 0 and both_done and pending == 0:
        raise _disagree(("to_move", "position"),
                        f"to_move must be None: both tokens are on the last space {end}")
    if to_move >= 0 and pending == 0 and position[to_move] > position[1 - to_move]:
        raise _disagree(("to_move", "position", "pending_leather"),
                        f"to_move={to_move} but that player is ahead on the time track "
                        f"(positions {position}) with no leather patch to place")
    if pending:
        other = position[1 - to_move]
        fresh = sum(1 for x in rules.leather_positions if other < x <= position[to_move])
        if pending > fresh:
            raise _disagree(("pending_leather", "to_move", "position"),
                            f"pending_leather={pending} but player {to_move} (to_move) has "
                            f"passed only {fresh} leather spaces ahead of the other token "
                            f"(positions {position}, leather spaces "
                            f"{list(rules.leather_positions)})")
        if quilts[to_move].bit_count() == N_CELLS:
            raise _disagree(("pending_leather", "to_move", "quilt"),
                            f"pending_leather > 0 but the quilt of player {to_move} "
                            "(to_move) is full")


def _read_first_to_finish(d: dict[str, Any], f: _Fields, position: list[int], end: int) -> int:
    finished = [p for p in range(2) if position[p] == end]
    if "first_to_finish" not in d:
        if len(finished) == 2:
            raise ValueError("state field 'first_to_finish' is needed when both tokens are on "
                             "the last space")
        return finished[0] if finished else -1
    first = f.int("first_to_finish", -1, 1)
    if (first < 0) != (not finished) or (first >= 0 and first not in finished):
        raise _disagree(("first_to_finish", "position"),
                        f"first_to_finish={first} does not match positions {position}")
    return first


def _check_bonus(quilts: list[int], owner: int, rules: Rules) -> None:
    squares = _squares(rules.bonus_size)
    has_square = [any(q & m == m for m in squares) for q in quilts]
    size = f"{rules.bonus_size}x{rules.bonus_size}"
    if owner >= 0 and not has_square[owner]:
        raise _disagree(("bonus_owner", "quilt"),
                        f"bonus_owner={owner} but that quilt has no full {size} square")
    if owner < 0 and any(has_square):
        raise _disagree(("bonus_owner", "quilt"),
                        f"a quilt has a full {size} square but bonus_owner is -1")


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
            raise _disagree(("cell_patches", "quilt"),
                            f"cell_patches of player {p} do not cover the cells of its quilt")
    owned: list[list[Patch]] = [[], []]
    for p in range(2):
        for pid, bits in sorted(spots[p].items()):
            if pid == LEATHER_ID:
                continue
            if pid in circle or pid in spots[1 - p]:
                where = "in the circle" if pid in circle else "on both quilts"
                raise _disagree(("cell_patches", "circle"),
                                f"patch {pid} is on a quilt and also elsewhere ({where})")
            if bits not in _PLACEMENTS[pid]:
                raise ValueError(f"state field 'cell_patches': the cells {_cells(bits)} of "
                                 f"patch {pid} on the quilt of player {p} are not its shape "
                                 f"{PATCHES[pid].shape!r} in any orientation")
            owned[p].append(PATCHES[pid])
        earned = sum(patch.income for patch in owned[p])
        if earned != income[p]:
            raise _disagree(("income", "cell_patches"),
                            f"income of player {p} is {income[p]} but its patches earn {earned}")
    lost = sorted(set(range(N_PATCHES)) - set(circle) - {patch.id for q in owned for patch in q})
    if lost:
        raise _disagree(("circle", "cell_patches"),
                        f"patches {lost} are neither in the circle nor on a quilt")
    return ids.astype(np.int8), owned


def _check_recorded(covered: list[int], full: tuple[bool, bool], circle: list[int],
                    income: list[int], position: list[int], track: _Track) -> None:
    """The recorded form: the patches bought must be shareable between the quilts."""
    bought = [p for p in PATCHES if p.id not in circle]
    if sum(income) != sum(p.income for p in bought):
        raise _disagree(("income", "circle"),
                        f"incomes {income} do not add up to the income of the {len(bought)} "
                        "patches bought (those not in the circle)")
    size = sum(p.size for p in bought)
    leathers = sum(covered) - size
    if not 0 <= leathers <= track.taken - sum(track.pending):
        raise _disagree(("quilt", "circle", "position", "pending_leather"),
                        f"the quilts cover {sum(covered)} cells, which does not match the "
                        f"patches bought ({size} cells) and the {track.taken} leather patches "
                        f"taken from the track (positions {position})")
    # dp[i]: bit k set when some of the patches bought have income i and k cells in all
    dp = [0] * (TOTAL_INCOME + 1)
    dp[0] = 1
    for patch in bought:
        for i in range(TOTAL_INCOME - patch.income, -1, -1):
            if dp[i]:
                dp[i + patch.income] |= dp[i] << patch.size
    sizes = dp[income[0]]
    for size0 in range(covered[0] + 1):
        placed = (covered[0] - size0, covered[1] - (size - size0))
        if sizes >> size0 & 1 and placed[1] >= 0 and track.possible(placed, full):
            return
    raise _disagree(("income", "quilt", "circle", "position", "pending_leather"),
                    f"no way of sharing the {len(bought)} patches bought between the players "
                    f"gives player 0 income {income[0]} on {covered[0]} covered cells and "
                    f"player 1 income {income[1]} on {covered[1]}, with the leather patches "
                    f"each can have taken (positions {position})")


def _check_economy(owned: list[list[Patch]], buttons: list[int], position: list[int],
                   income: list[int], rules: Rules, source: str) -> None:
    """Time and buttons against the patches bought: per player when ``owned`` holds each
    player's patches, for both players together when it holds one list of all of them."""
    start, end = rules.start_buttons, rules.track_end
    passed = [sum(1 for x in rules.income_positions if x <= position[p]) for p in range(2)]
    for p in range(2):
        most = start + position[p] + income[p] * passed[p]
        if buttons[p] > most:
            raise _disagree(("buttons", "position", "income"),
                            f"player {p} holds {buttons[p]} buttons, more than the {most} it "
                            f"can have on space {position[p]} with income {income[p]} ({start} "
                            f"to start, 1 per space, {income[p]} at each of {passed[p]} income "
                            "spaces passed)")
    groups = [[p] for p in range(2)] if len(owned) == 2 else [[0, 1]]
    for players, patches in zip(groups, owned, strict=True):
        who = f"player {players[0]}" if len(players) == 1 else "the players together"
        cost, time = sum(p.cost for p in patches), sum(p.time for p in patches)
        moved = sum(position[p] for p in players)
        cut = sum(_TIME_CUT for p in players if position[p] == end)
        if time > moved + cut:
            raise _disagree(("position", source),
                            f"the patches of {who} take {time} spaces of time, more than the "
                            f"token moved (positions {position})")
        # the spaces advanced earned one button each: the spaces moved less the time of
        # the patches bought, give or take the time the end of the track cut off
        held = sum(buttons[p] for p in players) + cost
        low = start * len(players) + max(0, moved - time)
        high = (start * len(players) + min(moved, moved - time + cut)
                + sum(income[p] * passed[p] for p in players))
        if not low <= held <= high:
            raise _disagree(("buttons", "position", "income", source),
                            f"{who} {'hold' if len(players) > 1 else 'holds'} "
                            f"{sum(buttons[p] for p in players)} buttons after "
                            f"paying {cost} for patches: that is outside {low}..{high}, the "
                            f"start plus what {len(players)} token(s) can have earned "
                            f"(positions {position}, incomes {income})")
