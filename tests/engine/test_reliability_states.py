"""Whatever state it is given, ``Game.from_dict`` refuses it by name or it plays on soundly.

Real states (random games of the engine, the recorded games of ``tests/data/vectors``) are
mutated at random; each mutant is either refused with a ``TypeError``/``ValueError`` that
names a field it touched, or accepted and then played to its end with random legal moves
without an invariant breaking (rule 12.2 of docs/rules.md). Then the integer inputs that
must never wrap. One test per kind of impossible state is in ``test_impossible_states.py``.
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
from patchwork_env.data.patches import LEATHER_ID
from patchwork_env.engine.serialize import OPTIONAL_KEYS, REQUIRED_KEYS, max_buttons
from tests.conftest import load_vectors
from tests.engine.random_states import check_invariants, first_state, play_to_the_end, random_game

Base = tuple[dict[str, Any], Rules | None]
"""A state dict and the rules to load it with (None: the dict says)."""


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
