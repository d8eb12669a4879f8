"""``python_patchwork`` states are written and read only as their action history: a text
carrying a pickle, a malformed or illegal history, or the game inside another game is
refused and runs nothing; real states round-trip through every way OpenSpiel has.

Skipped when OpenSpiel is not installed (``pip install -e ".[openspiel]"``).
"""

from __future__ import annotations

import base64
import pickle
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyspiel")

import pyspiel

from patchwork_env.integrations import openspiel as pw

HEADER = "# crafted\n[Meta]\nVersion: 1\n\n[Game]\n{game}\n[State]\n{state}\n"


class _Touch:
    """Unpickling this creates ``path``: the proof that a payload ran."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self) -> tuple:
        return Path.touch, (Path(self.path),)


def crafted_state(path: Path) -> str:
    """OpenSpiel's own state form for Python games, with a payload that creates ``path``."""
    payload = base64.b64encode(pickle.dumps({"_pos": _Touch(path)})).decode()
    return f"history=\nmove_number=0\n__dict__={payload}"


@pytest.fixture(scope="module")
def game() -> pw.PatchworkGame:
    return pw.load_game()


def played(game: pw.PatchworkGame, seed: int, moves: int = 20) -> pyspiel.State:
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while not state.is_terminal() and moves > 0:
        if state.is_chance_node():
            state.apply_action(int(rng.choice([a for a, _ in state.chance_outcomes()])))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
            moves -= 1
    return state


def test_a_pickle_bearing_text_is_refused_and_runs_nothing(game, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    text = HEADER.format(game="python_patchwork(rules=default)", state=crafted_state(marker))
    with pytest.raises(ValueError, match=r"action history.*line 1 is 'history='"):
        pyspiel.deserialize_game_and_state(text)
    with pytest.raises(ValueError, match="only as their action history"):
        game.deserialize_state(crafted_state(marker))
    wrapped = text.replace("python_patchwork(rules=default)", "misere(game=python_patchwork())")
    with pytest.raises(ValueError, match="inside 'misere'"):
        pyspiel.deserialize_game_and_state(wrapped)
    assert not marker.exists()


@pytest.mark.parametrize("state_text, message", [
    ("0\n0", r"action 1 \(0\) cannot be played: .*undealt"),
    ("32", r"action 0 \(32\) cannot be played"),
    ("-1", "line 1 is '-1'"),
    ("0x1f", "line 1 is '0x1f'"),
    (" 3", "line 1 is ' 3'"),
    ("3.0", "line 1 is '3.0'"),
    ("1234567890123", "line 1 is '1234567890123'"),
])
def test_malformed_or_illegal_histories_are_refused(game, state_text, message) -> None:
    text = HEADER.format(game="python_patchwork()", state=state_text)
    with pytest.raises(ValueError, match=message) as refused:
        pyspiel.deserialize_game_and_state(text)
    assert "\n" not in str(refused.value)


def test_a_move_after_the_end_or_out_of_turn_is_refused(game) -> None:
    state = played(game, 0, moves=10_000)
    assert state.is_terminal()
    history = "\n".join(map(str, [*state.history(), 1944]))
    with pytest.raises(ValueError, match=f"action {len(state.history())} \\(1944\\)"):
        game.deserialize_state(history)
    setup = state.history()[:pw.N_SETUP_NODES]
    with pytest.raises(ValueError, match="cannot be played"):
        game.deserialize_state("\n".join(map(str, [*setup, 1945])))


@pytest.mark.parametrize("text, message", [
    ("[Game]\npython_patchwork()\n[State]\n", r"section \[Game\] out of order"),
    ("python_patchwork()\n[Meta]\n", "before"),
    ("[Meta]\n[Game]\npython_patchwork()\n", r"no \[State\] section"),
    ("[Meta]\n[Game]\npython_patchwork(\n[State]\n", "cannot be read"),
])
def test_malformed_envelopes_are_refused(text, message) -> None:
    with pytest.raises(ValueError, match=message):
        pyspiel.deserialize_game_and_state(text)


def test_states_round_trip_as_their_history(game) -> None:
    for state in (game.new_initial_state(), game.new_initial_state().child(7),
                  played(game, 1), played(game, 2, moves=10_000)):
        text = pyspiel.serialize_game_and_state(game, state)
        state_text = text.split("[State]\n", 1)[1]
        assert state_text.split() == [str(a) for a in state.history()]
        assert state.serialize().split() == state_text.split()
        game2, state2 = pyspiel.deserialize_game_and_state(text)
        assert isinstance(state2, pw.PatchworkState) and str(game2) == str(game)
        assert state2.history() == state.history() and str(state2) == str(state)
        assert state2.move_number() == state.move_number()
        for player in (0, 1):
            assert state2.observation_tensor(player) == state.observation_tensor(player)
        unpickled = pickle.loads(pickle.dumps(state))
        assert unpickled.history() == state.history() and str(unpickled) == str(state)
        assert b"_pos" not in pickle.dumps(state)


def test_openspiels_own_form_pickles_only_a_replay_marker(game) -> None:
    state = played(game, 3)
    own = pw.serialize_game_and_state.__wrapped__(game, state)
    assert len(own) < 2_000  # the history and a marker, not a pickled engine game
    _, state2 = pw.deserialize_game_and_state.__wrapped__(own)
    assert state2.history() == state.history()
    assert state2.engine_game == state.engine_game


def test_other_games_still_go_to_openspiel() -> None:
    other = pyspiel.load_game("tic_tac_toe")
    state = other.new_initial_state().child(4)
    game2, state2 = pyspiel.deserialize_game_and_state(
        pyspiel.serialize_game_and_state(other, state))
    assert str(game2) == "tic_tac_toe()" and state2.history() == [4]
