"""Replays every recorded game of ``tests/data/vectors`` and compares every state."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from patchwork_env import ADVANCE, LEATHER_BASE, Game, Rules
from patchwork_env.data.actions import SLOT_STRIDE
from patchwork_env.data.tables import PLACEMENT_LEGAL, PLACEMENT_MASKS, cells_to_words
from tests.conftest import load_vectors

FILES = ["default-public.jsonl", "revised-public.jsonl"]


def recorded_action(game: Game, move: dict[str, Any]) -> int:
    """The action id of a recorded move (a buy is recorded by slot and covered cells)."""
    if move["action"] == "advance":
        return ADVANCE
    if move["action"] == "leather":
        return LEATHER_BASE + move["cell"]
    slot = move["slot"]
    patch = game.circle[slot]
    assert patch == move["patch"], f"slot {slot} holds patch {patch}, record says {move}"
    lo, hi = cells_to_words(move["cells"])
    masks = PLACEMENT_MASKS[patch]
    codes = np.flatnonzero(PLACEMENT_LEGAL[patch] & (masks[:, 0] == lo) & (masks[:, 1] == hi))
    assert len(codes) == 1, f"no single canonical placement covers {move['cells']}"
    return slot * SLOT_STRIDE + int(codes[0])


def replay(record: dict[str, Any]) -> Game:
    game = Game.new(circle=record["circle"], first_player=record["first_player"],
                    rules=Rules.from_dict(record["rules"]))
    assert len(record["moves"]) == len(record["states"])
    for i, (move, expected) in enumerate(zip(record["moves"], record["states"], strict=True)):
        assert game.to_move == move["player"], f"move {i}: wrong player to move"
        game.step(recorded_action(game, move))
        state = game.state_dict()
        for key, value in expected.items():
            assert state[key] == value, f"move {i} ({move}): {key} is {state[key]}, not {value}"
    return game


@pytest.mark.parametrize("name", FILES)
def test_every_recorded_game_replays_exactly(name: str) -> None:
    records = load_vectors(name)
    assert len(records) == 200
    for n, record in enumerate(records):
        game = replay(record)
        final = record["final"]
        assert game.is_over, f"game {n} is not over after its last move"
        assert list(game.scores()) == final["score"], f"game {n}: final score"
        assert game.winner == final["winner"], f"game {n}: winner"
        assert game.first_to_finish == final["first_to_finish"], f"game {n}: first_to_finish"


@pytest.mark.parametrize("name", FILES)
def test_recorded_states_load_and_continue_identically(name: str) -> None:
    record = load_vectors(name)[7]
    game = Game.new(circle=record["circle"], first_player=record["first_player"],
                    rules=Rules.from_dict(record["rules"]))
    for move, expected in zip(record["moves"][:-1], record["states"][:-1], strict=True):
        game.step(recorded_action(game, move))
        loaded = Game.from_dict(expected, rules=Rules.from_dict(record["rules"]))
        assert loaded.legal_actions().tolist() == game.legal_actions().tolist()
