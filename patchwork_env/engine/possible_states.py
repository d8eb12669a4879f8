"""What a possible Patchwork position is: the invariants a state dict must meet to load.

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
from typing import NamedTuple

from patchwork_env.data.actions import N_CELLS
from patchwork_env.data.patches import N_PATCHES, PATCHES, Patch
from patchwork_env.data.rules import Rules
from patchwork_env.data.tables import LIST_MASK, LIST_START, WORD_BITS, bonus_masks

TOTAL_INCOME = sum(p.income for p in PATCHES)
"""The income of all 33 patches together (38): no quilt earns more."""


TIME_CUT = max(p.time for p in PATCHES) - 1
"""The most time the end of the track can cut from a player's last patch."""


PLACEMENTS = [{int(lo) | int(hi) << WORD_BITS
                for lo, hi in LIST_MASK[LIST_START[p] : LIST_START[p + 1]]}
               for p in range(N_PATCHES)]
"""The cells (bit ``c`` for cell ``c``) of every placement of each patch, all orientations."""


WORD = (1 << WORD_BITS) - 1


@cache
def bonus_squares(size: int) -> tuple[int, ...]:
    """Every ``size`` x ``size`` square of the board, bit ``c`` for cell ``c``."""
    return tuple(int(lo) | int(hi) << WORD_BITS for lo, hi in bonus_masks(size))


def max_buttons(rules: Rules) -> int:
    """The most buttons a player can ever hold under ``rules``: the start, one button per
    space of the track and the income of every patch at every income space."""
    return rules.start_buttons + rules.track_end + TOTAL_INCOME * len(rules.income_positions)


def field_names(fields: tuple[str, ...]) -> str:
    quoted = [f"'{f}'" for f in fields]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def disagree(fields: tuple[str, ...], text: str) -> ValueError:
    return ValueError(f"state fields {field_names(fields)} disagree: {text}")


class Track(NamedTuple):
    """What the tokens' positions say about the leather patches taken from the track."""

    shared: int
    """Leather spaces both tokens have passed: taken by either player."""
    only: tuple[int, int]
    """Leather spaces only player p's token has passed: taken by p."""
    pending: tuple[int, int]
    """Leather patches player p still has to place."""

    @classmethod
    def of(cls, rules: Rules, position: list[int], to_move: int, pending: int) -> Track:
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


def cells_of(bits: int) -> list[int]:
    return [c for c in range(N_CELLS) if bits >> c & 1]


def check_turn(position: list[int], to_move: int, pending: int, quilts: list[int],
                rules: Rules) -> None:
    end = rules.track_end
    both_done = position[0] == end and position[1] == end
    if to_move < 0 and not (both_done and pending == 0):
        raise disagree(("to_move", "position", "pending_leather"),
                        "to_move is None but the game is not over (both tokens must be on "
                        f"space {end} with no leather pending), positions {position}")
    if to_move >= 0 and both_done and pending == 0:
        raise disagree(("to_move", "position"),
                        f"to_move must be None: both tokens are on the last space {end}")
    if to_move >= 0 and pending == 0 and position[to_move] > position[1 - to_move]:
        raise disagree(("to_move", "position", "pending_leather"),
                        f"to_move={to_move} but that player is ahead on the time track "
                        f"(positions {position}) with no leather patch to place")
    if pending:
        other = position[1 - to_move]
        fresh = sum(1 for x in rules.leather_positions if other < x <= position[to_move])
        if pending > fresh:
            raise disagree(("pending_leather", "to_move", "position"),
                            f"pending_leather={pending} but player {to_move} (to_move) has "
                            f"passed only {fresh} leather spaces ahead of the other token "
                            f"(positions {position}, leather spaces "
                            f"{list(rules.leather_positions)})")
        if quilts[to_move].bit_count() == N_CELLS:
            raise disagree(("pending_leather", "to_move", "quilt"),
                            f"pending_leather > 0 but the quilt of player {to_move} "
                            "(to_move) is full")


def check_bonus(quilts: list[int], owner: int, rules: Rules) -> None:
    squares = bonus_squares(rules.bonus_size)
    has_square = [any(q & m == m for m in squares) for q in quilts]
    size = f"{rules.bonus_size}x{rules.bonus_size}"
    if owner >= 0 and not has_square[owner]:
        raise disagree(("bonus_owner", "quilt"),
                        f"bonus_owner={owner} but that quilt has no full {size} square")
    if owner < 0 and any(has_square):
        raise disagree(("bonus_owner", "quilt"),
                        f"a quilt has a full {size} square but bonus_owner is -1")


def check_recorded(covered: list[int], full: tuple[bool, bool], circle: list[int],
                    income: list[int], position: list[int], track: Track) -> None:
    """The recorded form: the patches bought must be shareable between the quilts."""
    bought = [p for p in PATCHES if p.id not in circle]
    if sum(income) != sum(p.income for p in bought):
        raise disagree(("income", "circle"),
                        f"incomes {income} do not add up to the income of the {len(bought)} "
                        "patches bought (those not in the circle)")
    size = sum(p.size for p in bought)
    leathers = sum(covered) - size
    if not 0 <= leathers <= track.taken - sum(track.pending):
        raise disagree(("quilt", "circle", "position", "pending_leather"),
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
    raise disagree(("income", "quilt", "circle", "position", "pending_leather"),
                    f"no way of sharing the {len(bought)} patches bought between the players "
                    f"gives player 0 income {income[0]} on {covered[0]} covered cells and "
                    f"player 1 income {income[1]} on {covered[1]}, with the leather patches "
                    f"each can have taken (positions {position})")


def check_economy(owned: list[list[Patch]], buttons: list[int], position: list[int],
                   income: list[int], rules: Rules, source: str) -> None:
    """Time and buttons against the patches bought: per player when ``owned`` holds each
    player's patches, for both players together when it holds one list of all of them."""
    start, end = rules.start_buttons, rules.track_end
    passed = [sum(1 for x in rules.income_positions if x <= position[p]) for p in range(2)]
    for p in range(2):
        most = start + position[p] + income[p] * passed[p]
        if buttons[p] > most:
            raise disagree(("buttons", "position", "income"),
                            f"player {p} holds {buttons[p]} buttons, more than the {most} it "
                            f"can have on space {position[p]} with income {income[p]} ({start} "
                            f"to start, 1 per space, {income[p]} at each of {passed[p]} income "
                            "spaces passed)")
    groups = [[p] for p in range(2)] if len(owned) == 2 else [[0, 1]]
    for players, patches in zip(groups, owned, strict=True):
        who = f"player {players[0]}" if len(players) == 1 else "the players together"
        cost, time = sum(p.cost for p in patches), sum(p.time for p in patches)
        moved = sum(position[p] for p in players)
        cut = sum(TIME_CUT for p in players if position[p] == end)
        if time > moved + cut:
            raise disagree(("position", source),
                            f"the patches of {who} take {time} spaces of time, more than the "
                            f"token moved (positions {position})")
        # the spaces advanced earned one button each: the spaces moved less the time of
        # the patches bought, give or take the time the end of the track cut off
        held = sum(buttons[p] for p in players) + cost
        low = start * len(players) + max(0, moved - time)
        high = (start * len(players) + min(moved, moved - time + cut)
                + sum(income[p] * passed[p] for p in players))
        if not low <= held <= high:
            raise disagree(("buttons", "position", "income", source),
                            f"{who} {'hold' if len(players) > 1 else 'holds'} "
                            f"{sum(buttons[p] for p in players)} buttons after "
                            f"paying {cost} for patches: that is outside {low}..{high}, the "
                            f"start plus what {len(players)} token(s) can have earned "
                            f"(positions {position}, incomes {income})")
