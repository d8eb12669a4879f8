"""The OpenSpiel game ``python_patchwork``: OpenSpiel's own checks, the chance setup, the
engine behind every move, serialisation, and OpenSpiel's MCTS bot against ``greedy``.

Skipped when OpenSpiel is not installed (``pip install -e ".[openspiel]"``).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("pyspiel")

import pyspiel
from open_spiel.python.algorithms import evaluate_bots, mcts

from patchwork_env import Game, agents, format_action
from patchwork_env.integrations import openspiel as pw
from patchwork_env.views.observation import PATCH_FEATURES, layout, observe


@pytest.fixture(scope="module")
def game() -> pw.PatchworkGame:
    return pw.load_game()


def deal(state: pyspiel.State, rng: np.random.Generator) -> None:
    """Play the chance nodes of the setup at random."""
    while state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes(), strict=True)
        state.apply_action(int(rng.choice(outcomes, p=probs)))


def random_game(game: pw.PatchworkGame, seed: int) -> pyspiel.State:
    """A state after the setup and some random moves (the game may be over)."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    deal(state, rng)
    for _ in range(30):
        if state.is_terminal():
            break
        state.apply_action(int(rng.choice(state.legal_actions())))
    return state


def test_the_game_is_registered_with_its_contract(game) -> None:
    assert pw.SHORT_NAME in pyspiel.registered_names()
    t = game.get_type()
    assert t.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert t.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert t.information == pyspiel.GameType.Information.PERFECT_INFORMATION
    assert t.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert t.reward_model == pyspiel.GameType.RewardModel.TERMINAL
    assert t.provides_observation_tensor and t.provides_information_state_string
    assert game.num_players() == 2
    assert game.num_distinct_actions() == 2026
    assert game.max_chance_outcomes() == 32
    assert game.max_game_length() == 2 * 53 + 5
    assert game.observation_tensor_shape() == [1189]
    assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (-1.0, 1.0, 0.0)
    assert str(pw.load_game("revised")) == "python_patchwork(rules=revised)"
    with pytest.raises(ValueError, match="unknown rules preset"):
        pw.load_game("nope")


@pytest.mark.parametrize("rules, sims", [("default", 3), ("classic", 1)])
def test_openspiel_random_simulations(rules: str, sims: int) -> None:
    pyspiel.random_sim_test(pw.load_game(rules), num_sims=sims, serialize=True, verbose=False)


def test_the_chance_setup_deals_a_uniform_circle_with_patch_0_last(game) -> None:
    rng = np.random.default_rng(1)
    state = game.new_initial_state()
    for left in range(32, 0, -1):
        assert state.current_player() == pyspiel.PlayerId.CHANCE
        outcomes = state.chance_outcomes()
        assert len(outcomes) == left
        assert all(p == pytest.approx(1 / left) for _, p in outcomes)
        assert all(0 <= a < game.max_chance_outcomes() for a, _ in outcomes)
        state.apply_action(int(rng.choice([a for a, _ in outcomes])))
    assert state.chance_outcomes() == [(0, 0.5), (1, 0.5)]
    state.apply_action(1)
    engine = state.engine_game
    assert sorted(engine.circle[:-1]) == list(range(1, 33)) and engine.circle[-1] == 0
    assert engine.circle[:-1] == state.dealt
    assert engine.to_move == 1
    expected = Game.new(circle=engine.circle, first_player=1)
    assert engine.state_dict() == expected.state_dict()
    with pytest.raises(ValueError, match="undealt"):
        game.new_initial_state().child(0).apply_action(0)


def test_every_move_is_the_engines(game) -> None:
    rng = np.random.default_rng(2)
    state = game.new_initial_state()
    deal(state, rng)
    mirror = Game.new(circle=state.engine_game.circle, first_player=state.current_player())
    while not state.is_terminal():
        assert state.returns() == [0.0, 0.0]
        assert state.current_player() == mirror.to_move
        legal = state.legal_actions()
        assert legal == mirror.legal_actions().tolist()
        assert state.legal_actions(1 - mirror.to_move) == []
        a = int(rng.choice(legal))
        assert state.action_to_string(a) == format_action(a)
        state.apply_action(a)
        mirror.step(a)
    assert mirror.is_over and state.current_player() == pyspiel.PlayerId.TERMINAL
    assert state.returns() == ([1.0, -1.0] if mirror.winner == 0 else [-1.0, 1.0])
    start = game.new_initial_state()
    deal(start, rng)
    with pytest.raises(ValueError, match="no leather patch is pending"):
        start.apply_action(2025)
    assert len(start.history()) == pw.N_SETUP_NODES


def test_observations_are_the_projects(game) -> None:
    state = random_game(game, 4)
    for player in (0, 1):
        expected = observe(state.engine_game.batch.state, game.rules, player)[0]
        np.testing.assert_array_equal(np.asarray(state.observation_tensor(player)), expected)
    assert state.observation_string(0) == str(state) == str(state.engine_game)
    assert state.information_state_string(0) == state.history_str()
    setup = game.new_initial_state().child(5).child(0)  # patches 6 then 1 dealt
    obs = layout(game.rules).split(np.asarray(setup.observation_tensor(0), np.float32))
    np.testing.assert_array_equal(obs["circle"][:2], PATCH_FEATURES[[6, 1]])
    assert not obs["circle"][2:].any() and not obs["to_move"].any()
    assert obs["buttons"].tolist() == pytest.approx([0.1, 0.1])


def test_serialisation_and_clones_round_trip(game) -> None:
    for state in (game.new_initial_state().child(7), random_game(game, 5)):
        text = pyspiel.serialize_game_and_state(game, state)
        game2, state2 = pyspiel.deserialize_game_and_state(text)
        assert str(game2) == str(game)
        assert state2.history() == state.history() and str(state2) == str(state)
    state = random_game(game, 6)
    clone = state.clone()
    assert clone.engine_game == state.engine_game
    assert clone.engine_game is not state.engine_game
    if not state.is_terminal():
        clone.apply_action(clone.legal_actions()[0])
        assert len(state.history()) == len(clone.history()) - 1


def test_openspiel_mcts_plays_greedy_through_evaluate_bots(game) -> None:
    rng = np.random.RandomState(0)
    for seat, evaluator in ((0, mcts.RandomRolloutEvaluator(1, np.random.RandomState(0))),
                            (1, pw.PlayoutEvaluator(2, seed=0))):
        search = mcts.MCTSBot(game, uct_c=2.0, max_simulations=4, evaluator=evaluator,
                              random_state=np.random.RandomState(seat))
        greedy = pw.AgentBot(agents.make("greedy", seed=seat), player_id=1 - seat)
        bots = [search, greedy] if seat == 0 else [greedy, search]
        returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
        assert sorted(returns) == [-1.0, 1.0]


def test_the_agent_bot_needs_a_player_node(game) -> None:
    bot = pw.AgentBot(agents.make("random", seed=0))
    assert bot.player_id() == -1 and not bot.provides_policy()
    with pytest.raises(ValueError, match="player to move"):
        bot.step(game.new_initial_state())
    state = random_game(game, 7)
    if not state.is_terminal():
        assert bot.step(state) in state.legal_actions()
    with pytest.raises(TypeError):
        pw.engine_game(pyspiel.load_game("tic_tac_toe").new_initial_state())


def test_importing_without_openspiel_says_what_to_install() -> None:
    code = ("import sys; sys.modules['pyspiel'] = None\n"
            "try:\n    import patchwork_env.integrations.openspiel\n"
            "except ImportError as e:\n    print(e)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert "patchwork-env[openspiel]" in done.stdout, done.stderr
