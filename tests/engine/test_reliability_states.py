"""Whatever state it is given, ``Game.from_dict`` refuses it by name or it plays on soundly.

Real states (random games of the engine, the recorded games of ``tests/data/vectors``) are
mutated at random; each mutant is either refused with a ``TypeError``/``ValueError`` that
names a field it touched, or accepted and then played to its end with random legal moves
without an invariant breaking. Then one test per kind of impossible state, and the
integer inputs that must never wrap.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchwork_env import ADVANCE, LEATHER_BASE, Game, GameBatch, Rules
from patchwork_env.data.actions import N_CELLS
from patchwork_env.data.patches import LEATHER_ID, N_PATCHES, PATCHES
from patchwork_env.engine.serialize import OPTIONAL_KEYS, REQUIRED_KEYS, TOTAL_INCOME, max_buttons

from tests.conftest import load_vectors

Base = tuple[dict[str, Any], Rules | None]
"""A state dict and the rules to load it with (None: the dict says)."""


def random_game(seed: int, advance: float = 0.0, rules: str | Rules = "default",
                plies: int | None = None) -> list[dict[str, Any]]:
    """The states of a game played with uniformly random legal moves, advancing instead
    with probability ``advance``; stops after ``plies`` moves if given."""
    rng = np.random.default_rng(seed)
    game = Game.new(seed=seed, rules=rules)
    states = []
    while not game.is_over and (plies is None or len(states) < plies):
        actions = game.legal_actions()
        wants = ADVANCE in actions and rng.random() < advance
        game.step(ADVANCE if wants else int(rng.choice(actions)))
        states.append(game.state_dict())
    return states


@cache
def bases() -> list[Base]:
    """Real states to mutate: every fourth state of a few random games, and of a few
    recorded games (in the recorded form, without ``cell_patches``)."""
    out: list[Base] = []
    for seed in range(4):
        out += [(d, None) for d in random_game(seed, advance=0.4 * (seed % 2))[::4]]
    for name in ("default-public.jsonl", "revised-public.jsonl"):
        for record in load_vectors(name)[:2]:
            rules = Rules.from_dict(record["rules"])
            for d in record["states"][::4] + record["states"][-1:]:
                d = dict(d)
                if d["to_move"] is None:
                    d["first_to_finish"] = record["final"]["first_to_finish"]
                out.append((d, rules))
    return out


# ---------------------------------------------------------------------------------------
# mutations: each changes ``d`` in place and returns the keys it touched

ODD = st.sampled_from([None, "5", "", 1.0, 0.5, float("nan"), True, False, [], {}, [1],
                       [1, 2, 3], 2**63, 2**64 - 1, -(2**63) - 1, 2**70, -1, np.int64(3),
                       np.uint64(2**64 - 1), object()])
VALUES = ODD | st.integers(-3, 60) | st.integers(-(2**70), 2**70)
PAIRS = ("position", "buttons", "income")
ALL_KEYS = REQUIRED_KEYS + OPTIONAL_KEYS
Mutation = Callable[[dict[str, Any], st.DataObject], set[str]]


def set_field(d: dict[str, Any], data: st.DataObject) -> set[str]:
    key = data.draw(st.sampled_from(ALL_KEYS))
    d[key] = data.draw(VALUES)
    return {key}


def set_element(d: dict[str, Any], data: st.DataObject) -> set[str]:
    key = data.draw(st.sampled_from(PAIRS))
    d[key] = list(d[key])
    d[key][data.draw(st.integers(0, 1))] = data.draw(VALUES)
    return {key}


def nudge(d: dict[str, Any], data: st.DataObject) -> set[str]:
    """A plausible change: one player's position, buttons or income off by a little."""
    key = data.draw(st.sampled_from(PAIRS))
    d[key] = list(d[key])
    d[key][data.draw(st.integers(0, 1))] += data.draw(st.integers(-4, 4))
    return {key}


def swap_players(d: dict[str, Any], data: st.DataObject) -> set[str]:
    key = data.draw(st.sampled_from([*PAIRS, "quilt", "cell_patches"]))
    if key not in d:
        return set()
    d[key] = [d[key][1], d[key][0]]
    return {key}


def drop_key(d: dict[str, Any], data: st.DataObject) -> set[str]:
    key = data.draw(st.sampled_from(sorted(d)))
    del d[key]
    return {key}


def add_key(d: dict[str, Any], data: st.DataObject) -> set[str]:
    key = data.draw(st.sampled_from(["colour", "first_to_finish", "rules", 3]))
    d[key] = data.draw(st.sampled_from(["default", "revised", -1, 0, 1, None]))
    return {str(key)}


def flip_cells(d: dict[str, Any], data: st.DataObject) -> set[str]:
    """Flip quilt cells, in ``cell_patches`` too (as leather or empty) if ``consistent``."""
    p = data.draw(st.integers(0, 1))
    cells = data.draw(st.lists(st.integers(0, N_CELLS - 1), min_size=1, max_size=3))
    consistent = data.draw(st.booleans())
    quilt = list(d["quilt"][p])
    for c in cells:
        quilt[c] = "1" if quilt[c] == "0" else "0"
        if consistent and "cell_patches" in d:
            d["cell_patches"] = [list(row) for row in d["cell_patches"]]
            d["cell_patches"][p][c] = LEATHER_ID if quilt[c] == "1" else -1
    d["quilt"] = [*d["quilt"]]
    d["quilt"][p] = "".join(quilt)
    return {"quilt", "cell_patches"} if consistent else {"quilt"}


def relabel_cell(d: dict[str, Any], data: st.DataObject) -> set[str]:
    if "cell_patches" not in d:
        return set()
    d["cell_patches"] = [list(row) for row in d["cell_patches"]]
    p, c = data.draw(st.integers(0, 1)), data.draw(st.integers(0, N_CELLS - 1))
    d["cell_patches"][p][c] = data.draw(st.integers(-2, LEATHER_ID + 1))
    return {"cell_patches"}


def change_circle(d: dict[str, Any], data: st.DataObject) -> set[str]:
    circle = list(d["circle"])
    how = data.draw(st.sampled_from(["drop", "insert", "swap", "reverse", "duplicate"]))
    if how == "drop" and circle:
        circle.pop(data.draw(st.integers(0, len(circle) - 1)))
    elif how == "insert":
        circle.insert(data.draw(st.integers(0, len(circle))), data.draw(st.integers(-1, 34)))
    elif how == "swap" and len(circle) > 1:
        index = st.integers(0, len(circle) - 1)
        i, j = data.draw(index), data.draw(index)
        circle[i], circle[j] = circle[j], circle[i]
    elif how == "reverse":
        circle.reverse()
    elif circle:
        circle.append(circle[0])
    d["circle"] = circle
    return {"circle"}


def set_small(d: dict[str, Any], data: st.DataObject) -> set[str]:
    """A plausible value for one of the single-int fields."""
    key = data.draw(st.sampled_from(["to_move", "pending_leather", "bonus_owner",
                                     "first_to_finish"]))
    d[key] = data.draw(st.sampled_from([None, -1, 0, 1, 2]) if key == "to_move"
                       else st.integers(-1, 3))
    return {key}


MUTATIONS: list[Mutation] = [set_field, set_element, nudge, nudge, swap_players, drop_key,
                             add_key, flip_cells, flip_cells, relabel_cell, change_circle,
                             set_small, set_small]


# ---------------------------------------------------------------------------------------
# what must hold in every position of a game


def check_invariants(game: Game, before: Game | None) -> None:
    """The invariants of a position (and of the move from ``before``, if given)."""
    rules = game.rules
    top = max_buttons(rules)
    assert top < 2**15, "buttons are stored as int16"
    assert all(0 <= b <= top for b in game.buttons), f"buttons {game.buttons} wrapped"
    assert all(0 <= x <= rules.track_end for x in game.position)
    assert all(0 <= i <= TOTAL_INCOME for i in game.income)
    assert 0 <= game.pending_leather <= len(rules.leather_positions)
    if before is not None:
        assert all(a >= b for a, b in zip(game.position, before.position, strict=True))
        assert all(set(before.quilt_cells(p)) <= set(game.quilt_cells(p)) for p in range(2))
        spent = max(p.cost for p in PATCHES)
        assert all(a - b >= -spent for a, b in zip(game.buttons, before.buttons, strict=True))
    d = game.state_dict()
    if "cell_patches" in d:  # the patches are known: the income is theirs
        for p in range(2):
            ids = set(d["cell_patches"][p]) - {-1, LEATHER_ID}
            assert game.income[p] == sum(PATCHES[i].income for i in ids)
    Game.from_dict(d)  # and it is still a possible state


def play_to_the_end(game: Game, rng: np.random.Generator) -> Game:
    """Uniformly random legal moves to the end, checking every position."""
    rules = game.rules
    limit = 2 * rules.track_end + 2 * len(rules.leather_positions) + 1
    before = None
    for _ in range(limit):
        check_invariants(game, before)
        if game.is_over:
            assert game.winner in (0, 1)
            return game
        actions = game.legal_actions()
        assert len(actions), "a game not over has a legal move"
        before = game.copy()
        game.step(int(rng.choice(actions)))
    raise AssertionError(f"the game did not end within {limit} moves")


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_a_mutated_state_is_refused_by_name_or_plays_soundly_to_the_end(
        data: st.DataObject) -> None:
    d, rules = data.draw(st.sampled_from(bases()))
    d = copy.deepcopy(d)
    touched: set[str] = set()
    for _ in range(data.draw(st.integers(1, 3))):
        trial = copy.deepcopy(d)
        try:  # a mutation may not apply to what an earlier one left
            keys = data.draw(st.sampled_from(MUTATIONS))(trial, data)
        except (TypeError, KeyError, IndexError, AttributeError, ValueError):
            continue
        d, touched = trial, touched | keys
    try:
        game = Game.from_dict(d, rules=rules)
    except (TypeError, ValueError) as e:
        # other rules change what every field means: then any field may be named
        named = "rules" in touched or any(key in str(e) for key in touched)
        assert named, f"{e!r} names none of {touched}"
        return
    play_to_the_end(game, np.random.default_rng(data.draw(st.integers(0, 2**32))))


def test_every_base_state_loads_and_plays_to_the_end() -> None:
    rng = np.random.default_rng(0)
    for d, rules in bases()[::5]:
        play_to_the_end(Game.from_dict(d, rules=rules), rng)


# ---------------------------------------------------------------------------------------
# one test per kind of impossible state


def first_state(predicate: Callable[[dict[str, Any]], bool], seeds: range = range(40),
                advance: float = 0.5) -> dict[str, Any]:
    """The first state of the random games of ``seeds`` for which ``predicate`` holds."""
    for seed in seeds:
        for d in random_game(seed, advance):
            if predicate(d):
                return copy.deepcopy(d)
    raise AssertionError("no such state in the random games")


def recorded(d: dict[str, Any]) -> dict[str, Any]:
    """The recorded form of a state: no cell record, no first_to_finish, no rules."""
    return {k: v for k, v in d.items() if k in REQUIRED_KEYS}


def refused(d: dict[str, Any], match: str, rules: Any = None) -> None:
    with pytest.raises(ValueError, match=match):
        Game.from_dict(d, rules=rules)


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


# ---------------------------------------------------------------------------------------
# fields never overflow in play


def test_the_largest_accepted_buttons_play_to_the_end_without_wrapping() -> None:
    rng = np.random.default_rng(1)
    for d in random_game(7, advance=0.5)[::10]:
        if d["to_move"] is None:
            continue
        p = d["to_move"]
        top = max_buttons(Rules())
        for b in range(top, -1, -1):  # the most this player may hold here
            try:
                game = Game.from_dict({**d, "buttons": [b if q == p else d["buttons"][q]
                                                        for q in range(2)]})
                break
            except ValueError as e:
                assert "buttons" in str(e)
        assert game.buttons[p] >= d["buttons"][p]
        play_to_the_end(game, rng)


def test_the_most_generous_rules_cannot_overflow_the_buttons() -> None:
    rules = Rules(track_end=120, start_buttons=1000, income_positions=tuple(range(1, 121)),
                  leather_positions=tuple(range(7, 120, 7)[:16]))
    assert max_buttons(rules) == 1000 + 120 + 38 * 120 < 2**15
    for seed in range(3):
        states = random_game(seed, advance=0.3, rules=rules)
        for d in states[::7] + states[-1:]:
            check_invariants(Game.from_dict(d), None)
        assert states[-1]["position"] == [120, 120]


# ---------------------------------------------------------------------------------------
# integers that must not wrap, seats that must be ints


@pytest.mark.parametrize("action", [np.uint64(2**64 - 1), 2**64 - 1, 2**63, np.uint64(2**63),
                                    -(2**63) - 1, 2**70, np.int64(-1)])
def test_an_action_beyond_64_bits_is_refused_by_value(action: Any) -> None:
    game = Game.new(seed=4)
    before = game.state_dict()
    with pytest.raises(ValueError, match=rf"illegal action {int(action)} .*out of range"):
        game.step(action)
    assert game.state_dict() == before
    game.step(ADVANCE)  # and the game goes on


@pytest.mark.parametrize("actions", [np.array([2**64 - 1], np.uint64), [2**63], [2**70],
                                     [-(2**63) - 1]])
def test_a_batch_action_beyond_64_bits_is_refused_by_value(actions: Any) -> None:
    batch = GameBatch.new(1, seed=4)
    before = batch.state.tobytes()
    with pytest.raises(ValueError, match="out of range"):
        batch.step(actions)
    assert batch.state.tobytes() == before


@pytest.mark.parametrize("seat", [True, False, 1.0, np.array(1), np.bool_(True), "1", 2])
def test_a_first_player_must_be_an_int_seat(seat: Any) -> None:
    with pytest.raises(ValueError, match="first_player must be 0 or 1"):
        Game.new(first_player=seat)


@pytest.mark.parametrize("first", [[True], [1.0], ["1"], [2]])
def test_batch_first_players_must_be_int_seats(first: list[Any]) -> None:
    circle = list(range(1, 33)) + [0]
    with pytest.raises((TypeError, ValueError), match="first_players"):
        GameBatch.from_setups([circle], first)


def test_a_batch_of_no_game_is_refused_however_it_is_made() -> None:
    with pytest.raises(ValueError, match="at least one game"):
        GameBatch.new(0)
    with pytest.raises(ValueError, match="at least one game"):
        GameBatch.from_setups([], [])
    with pytest.raises(ValueError, match="at least one game"):
        GameBatch.from_seeds([])


def test_the_leather_action_of_an_empty_cell_is_only_legal_when_pending() -> None:
    d = first_state(lambda d: d["pending_leather"] > 0)
    game = Game.from_dict(d)
    assert set(game.legal_actions().tolist()) <= set(range(LEATHER_BASE, LEATHER_BASE + 81))
    with pytest.raises(ValueError, match="a leather patch must be placed first"):
        game.step(ADVANCE)
