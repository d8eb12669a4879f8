"""Random games and what must hold in every position: helpers of the state tests.

:func:`random_game` plays a game with uniformly random legal moves and keeps its states;
:func:`play_to_the_end` plays a loaded state out, checking :func:`check_invariants` at every
position; :func:`first_state`, :func:`recorded` and :func:`refused` build and test the
impossible states of ``test_impossible_states.py``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from patchwork_env import ADVANCE, Game, Rules
from patchwork_env.data.patches import LEATHER_ID, PATCHES
from patchwork_env.engine.serialize import REQUIRED_KEYS, TOTAL_INCOME, max_buttons


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
    """``Game.from_dict`` refuses ``d`` with a ``ValueError`` matching ``match``."""
    with pytest.raises(ValueError, match=match):
        Game.from_dict(d, rules=rules)
