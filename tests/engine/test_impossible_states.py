"""One test per kind of impossible state: ``Game.from_dict`` refuses it, naming the field.

Rule 12.2 of docs/rules.md: a state that no game under the rules can reach is refused with
a message naming the fields involved. Each test takes a real position of a random game,
breaks one invariant and checks the message; the real position itself is accepted.
"""

from __future__ import annotations

from typing import Any

import pytest

from patchwork_env import ADVANCE, Game
from patchwork_env.data.actions import N_CELLS
from patchwork_env.data.patches import LEATHER_ID, N_PATCHES, PATCHES
from tests.engine.random_states import first_state, random_game, recorded, refused


def test_pending_leather_for_a_player_who_never_reached_a_leather_space_is_refused() -> None:
    d = first_state(lambda d: max(d["position"]) < 20 and d["to_move"] is not None)
    for form in (d, recorded(d)):
        refused({**form, "pending_leather": 1}, r"pending_leather=1 but player \d \(to_move\) "
                r"has passed only 0 leather spaces")


def test_pending_leather_for_a_space_the_other_player_took_is_refused() -> None:
    # both tokens past space 20, the one behind to move: space 20 went to the other
    d = first_state(lambda d: 20 < min(d["position"]) < 26 and d["pending_leather"] == 0
                    and d["to_move"] is not None
                    and d["position"][d["to_move"]] < d["position"][1 - d["to_move"]])
    refused({**d, "pending_leather": 1}, "has passed only 0 leather spaces ahead")


def test_a_real_pending_leather_is_accepted() -> None:
    d = first_state(lambda d: d["pending_leather"] > 0)
    assert Game.from_dict(d).pending_leather == d["pending_leather"]
    assert Game.from_dict(recorded(d)).pending_leather == d["pending_leather"]


def test_income_moved_to_a_player_without_patches_is_refused_in_the_recorded_form() -> None:
    d = first_state(lambda d: d["income"][0] > 0 and "1" not in d["quilt"][1], advance=0.0)
    moved = recorded(d)
    moved["income"] = [d["income"][0] - 1, d["income"][1] + 1]
    assert sum(moved["income"]) == sum(d["income"])  # the totals still add up
    refused(moved, r"'income'.*no way of sharing the \d+ patches bought")
    Game.from_dict(recorded(d))  # the real incomes are fine


def test_incomes_that_no_share_of_the_patches_bought_gives_are_refused() -> None:
    """Moving one button of income between two players who both hold patches is refused
    whenever no share of the patches bought fits both quilts' counts; a real game has such
    positions, and its real incomes are always accepted."""
    found = 0
    for d in random_game(5, advance=0.2):
        if min(d["income"]) == 0 or d["to_move"] is None:
            continue
        Game.from_dict(recorded(d))
        for shift in (-1, 1):
            moved = recorded(d)
            moved["income"] = [d["income"][0] + shift, d["income"][1] - shift]
            try:
                Game.from_dict(moved)
            except ValueError as e:
                assert "'income'" in str(e)
                found += "no way of sharing" in str(e)
    assert found > 0


def test_cells_moved_from_one_quilt_to_the_other_are_refused_in_the_recorded_form() -> None:
    d = first_state(lambda d: "1" not in d["quilt"][1] and d["quilt"][0].count("1") >= 2,
                    advance=0.0)
    moved = recorded(d)
    cell = moved["quilt"][0].index("1")
    moved["quilt"] = [moved["quilt"][0][:cell] + "0" + moved["quilt"][0][cell + 1:],
                      moved["quilt"][1][:cell] + "1" + moved["quilt"][1][cell + 1:]]
    refused(moved, "no way of sharing")


def a_patch_on_quilt(d: dict[str, Any], p: int, min_size: int = 2) -> tuple[int, list[int]]:
    ids = d["cell_patches"][p]
    for pid in sorted(set(ids) - {-1, LEATHER_ID}):
        if PATCHES[pid].size >= min_size:
            return pid, [c for c in range(N_CELLS) if ids[c] == pid]
    raise AssertionError("no patch on the quilt")


def far_empty_cell(d: dict[str, Any], p: int, cells: list[int]) -> int:
    """An empty cell not next to any of ``cells`` (so a patch moved there breaks apart)."""
    for c in range(N_CELLS):
        near = any(abs(c // 9 - x // 9) <= 1 and abs(c % 9 - x % 9) <= 1 for x in cells)
        if d["quilt"][p][c] == "0" and not near:
            return c
    raise AssertionError("no far empty cell")


def put(d: dict[str, Any], p: int, cell: int, pid: int) -> None:
    """Set one cell of player ``p``'s quilt and cell record (``pid`` -1 empties it)."""
    d["cell_patches"][p][cell] = pid
    q = d["quilt"][p]
    d["quilt"][p] = q[:cell] + ("0" if pid < 0 else "1") + q[cell + 1:]


def test_a_patch_whose_cells_lost_its_shape_is_refused() -> None:
    d = first_state(lambda d: "cell_patches" in d and d["bonus_owner"] < 0
                    and any(PATCHES[i].size >= 2 for i in set(d["cell_patches"][0]) - {-1, 33}))
    pid, cells = a_patch_on_quilt(d, 0)
    target = far_empty_cell(d, 0, cells[1:])
    put(d, 0, cells[0], -1)
    put(d, 0, target, pid)
    refused(d, rf"'cell_patches': the cells .* of patch {pid} .* not its shape")


def test_a_patch_on_both_quilts_is_refused() -> None:
    d = first_state(lambda d: "cell_patches" in d and d["bonus_owner"] < 0
                    and set(d["cell_patches"][0]) - {-1, 33}
                    and d["quilt"][1].count("1") < 30)
    pid, cells = a_patch_on_quilt(d, 0, min_size=1)
    for c in range(N_CELLS):  # a free copy of the patch's cells on the other quilt
        if d["quilt"][1][c] == "1":
            put(d, 1, c, -1)
    for c in cells:
        put(d, 1, c, pid)
    refused(d, rf"patch {pid} is on a quilt and also elsewhere \(on both quilts\)")


def test_more_leather_patches_than_were_taken_are_refused() -> None:
    d = first_state(lambda d: "cell_patches" in d and max(d["position"]) < 20
                    and d["bonus_owner"] < 0)
    put(d, 0, d["quilt"][0].index("0"), LEATHER_ID)
    refused(d, r"the quilts hold \[1, 0\] leather patches")
    refused(recorded(d), "does not match the patches bought")


def test_a_patch_relabelled_as_leather_is_refused() -> None:
    d = first_state(lambda d: "cell_patches" in d and d["bonus_owner"] < 0
                    and set(d["cell_patches"][0]) - {-1, 33})
    _, cells = a_patch_on_quilt(d, 0, min_size=1)
    for c in cells:
        put(d, 0, c, LEATHER_ID)
    refused(d, "disagree")


def test_the_circle_must_hold_exactly_the_patches_on_no_quilt() -> None:
    d = first_state(lambda d: "cell_patches" in d and len(d["circle"]) < N_PATCHES - 1)
    on_quilt = next(i for i in range(N_PATCHES) if i not in d["circle"])
    refused({**d, "circle": [*d["circle"], on_quilt]}, "is on a quilt and also elsewhere")
    refused({**d, "circle": d["circle"][1:]}, r"patches \[\d+\] are neither in the circle")


def test_a_full_circle_keeps_patch_zero_last() -> None:
    d = Game.new(seed=3).state_dict()
    circle = d["circle"]
    refused({**d, "circle": circle[-1:] + circle[:-1]}, "patch 0 must still be last")


@pytest.mark.parametrize(("buttons", "match"), [
    ([32767, 32767], r"'buttons' must be in 0\.\.400, got 32767"),
    ([401, 5], r"'buttons' must be in 0\.\.400, got 401"),
    ([-1, 5], r"'buttons' must be in 0\.\.400, got -1"),
    ([5, 300], r"player 1 holds 300 buttons, more than the"),
])
def test_buttons_no_game_can_hold_are_refused(buttons: list[int], match: str) -> None:
    d = Game.new(seed=2).state_dict()
    refused({**d, "buttons": buttons}, match)
    refused(recorded({**d, "buttons": buttons}), match)


def test_buttons_below_what_was_paid_are_refused() -> None:
    # patch 10 costs 1 and takes 2: bought first, the buyer holds 5 - 1 = 4
    game = Game.new(circle=[10, *range(1, 10), *range(11, 33), 0], first_player=0)
    game.step(next(a for a in game.legal_actions() if a < ADVANCE))
    d = game.state_dict()
    assert d["buttons"][0] == 4
    refused({**d, "buttons": [3, 5]}, r"player 0 holds 3 buttons after paying 1")
    refused(recorded({**d, "buttons": [3, 5]}), "the players together hold 8 buttons")


def test_buttons_below_what_the_spaces_advanced_paid_are_refused() -> None:
    game = Game.new(seed=2)
    game.step(ADVANCE)  # one space in front of the other token: one button
    d = game.state_dict()
    p = 1 - d["to_move"]
    assert d["buttons"][p] == 6
    fewer = [5, 5]
    refused({**d, "buttons": fewer}, rf"player {p} holds 5 buttons after paying 0 .* 6\.\.6")
    refused(recorded({**d, "buttons": fewer}), r"outside 11\.\.11")


def test_patches_taking_more_time_than_the_token_moved_are_refused() -> None:
    game = Game.new(circle=[10, *range(1, 10), *range(11, 33), 0], first_player=0)
    game.step(next(a for a in game.legal_actions() if a < ADVANCE))  # to space 2
    d = game.state_dict()
    refused({**d, "position": [1, 0]}, r"take 2 spaces of time, more than the token moved")
    refused(recorded({**d, "position": [1, 0]}), "take 2 spaces of time")


@pytest.mark.parametrize(("change", "match"), [
    ({"position": [3, 54]}, r"'position' must be in 0\.\.53"),
    ({"bonus_owner": 1}, "no full 7x7 square"),
    ({"first_to_finish": 0}, r"first_to_finish=0 does not match positions"),
    ({"to_move": None}, "the game is not over"),
    ({"rules": "revised"}, "differs from the rules given"),
    ({"cell_patches": [[-1] * 81, [-1] * 80]}, "'cell_patches' must be two lists of 81 ints"),
    ({"rules": {"track_end": "53"}}, "state field 'rules': Rules.track_end must be an int"),
    ({"circle": [1.0]}, "'circle' must be an int"),
])
def test_other_impossible_fields_are_refused_by_name(change: dict[str, Any], match: str) -> None:
    d = Game.new(seed=2).state_dict()
    with pytest.raises((TypeError, ValueError), match=match):
        Game.from_dict({**d, **change}, rules="default")


def test_keys_of_any_kind_are_named() -> None:
    d = Game.new(seed=2).state_dict()
    refused({**d, 3: 1, "colour": 2}, r"unknown keys \['colour', 3\]")
