"""The agents of Patchwork Draft: legal moves, seeds, the registry, the greedy player's
choice on hand-built positions, and a tree search that never reads the deck's hidden
order."""

from __future__ import annotations

import numpy as np
import pytest

from patchwork_env.agents import AgentSpecError, make
from patchwork_env.agents.draft_greedy import DraftGreedyAgent
from patchwork_env.agents.mcts.draft_agent import DraftMCTSAgent
from patchwork_env.agents.random_agent import RandomAgent
from patchwork_env.data.draft_actions import DISCARD_BASE
from patchwork_env.data.patches import N_PATCHES
from patchwork_env.engine.draft_batch import DraftBatch
from patchwork_env.views.draft_game import DraftGame
from tests.draft_positions import draft_position, full_rows

DRAFT_SPECS = ["random", "greedy", "mcts:30", "mcts:0.01s"]


def play_out(batch: DraftBatch, agent_of_seat: dict[int, object]) -> list[list[int]]:
    """Play every game of ``batch`` to its end, each seat's moves chosen by its agent and
    checked by the engine; the moves of each game."""
    moves: list[list[int]] = [[] for _ in range(len(batch))]
    while not batch.done.all():
        actions = np.full(len(batch), -1, np.int64)
        for seat, agent in agent_of_seat.items():
            rows = np.flatnonzero(batch.to_move == seat)
            if len(rows):
                actions[rows] = agent.act(batch, rows)
        batch.step(actions)  # checked: an illegal move raises
        for row in np.flatnonzero(actions >= 0):
            moves[row].append(int(actions[row]))
    return moves


@pytest.mark.parametrize("spec", DRAFT_SPECS)
def test_every_draft_agent_plays_only_legal_moves_to_the_end(spec: str) -> None:
    batch = DraftBatch.new(6, seed=4)
    moves = play_out(batch, {0: make(spec, 1, game="draft"), 1: make("random", 2, game="draft")})
    assert batch.done.all() and all(len(m) > 0 for m in moves)


@pytest.mark.parametrize("spec", ["random", "greedy", "mcts:40"])
def test_a_draft_agent_repeats_its_games_from_a_seed(spec: str) -> None:
    runs = [play_out(DraftBatch.new(3, seed=9), {0: make(spec, 5, game="draft"),
                                                 1: make(spec, 6, game="draft")})
            for _ in range(2)]
    assert runs[0] == runs[1]


def test_the_registry_builds_each_draft_agent() -> None:
    assert isinstance(make("random", 0, game="draft"), RandomAgent)
    assert isinstance(make("greedy", 0, game="draft"), DraftGreedyAgent)
    agent = make("mcts:250", 0, game="draft")
    assert isinstance(agent, DraftMCTSAgent) and agent.spec == "mcts:250"


@pytest.mark.parametrize(("spec", "game", "message"), [
    ("ppo:x.pt", "draft", "agent 'ppo' does not play Patchwork Draft"),
    ("ppo-sample", "draft", "agent 'ppo-sample' does not play Patchwork Draft"),
    ("human", "draft", "agent 'human' does not play Patchwork Draft"),
    ("chess-engine", "draft", "unknown agent 'chess-engine'"),
    ("mcts:lots", "draft", "bad MCTS budget"),
    ("greedy:3", "draft", "takes no argument"),
    ("random", "chess", "unknown game 'chess'"),
])
def test_a_spec_the_draft_has_no_agent_for_is_refused(spec: str, game: str,
                                                      message: str) -> None:
    with pytest.raises(AgentSpecError, match=message):
        make(spec, 0, game=game)


def test_greedy_completes_a_row_rather_than_not() -> None:
    # row 1 lacks h1 and i1: patch 0 (XX, slot 1) completes it; patches 1 and 2 cannot
    game = draft_position(quilts=(full_rows(0, "XXXXXXX.."), full_rows(0)), rules="no-stars")
    action = DraftGreedyAgent().act_game(game)
    assert action // 648 == 1
    game.step(action)
    assert game.points == (1, 0) and game.buttons == (5 - 2 + 1, 5)


def test_greedy_places_a_starred_patch_on_a_star_square() -> None:
    # patch 2 (XXXX, slot 0) is starred and the only one affordable (the others cost 10);
    # b2, h2, e5, b8 and h8 are the star squares
    game = draft_position(row=(2, 6, 19), buttons=(3, 5))
    game.step(DraftGreedyAgent().act_game(game))
    assert game.points == (1, 0)


def test_greedy_discards_the_patch_the_opponent_wants() -> None:
    # player 0 cannot pay for anything; player 1 can buy only patch 1 (slot 0)
    game = draft_position(row=(1, 6, 19), buttons=(0, 2))
    assert DraftGreedyAgent().act_game(game) == DISCARD_BASE + 0


def same_but_for_the_deck_order() -> tuple[DraftGame, DraftGame]:
    """Two games a few turns in that a player cannot tell apart: the same quilts, buttons
    and face-up row, the same patches in the deck, in two different orders."""
    unseen = [p for p in range(N_PATCHES) if p not in (1, 0, 2, 16, 24)]
    quilts = (full_rows(1, "XXX......"), full_rows(0, "XXXXX...."))
    return tuple(draft_position(quilts=quilts, buttons=(3, 4), deck=deck)
                 for deck in (unseen, unseen[::-1]))


def test_mcts_does_not_read_the_hidden_deck_order() -> None:
    choices = []
    for game in same_but_for_the_deck_order():
        agent = DraftMCTSAgent("300", seed=3)
        choices.append((agent.act_game(game), agent.root_visits.tolist(),
                        agent.root_wins.tolist()))
    assert choices[0] == choices[1]


def test_the_hidden_order_changes_what_random_play_does() -> None:
    # the premise of the test above: the two games play out differently
    ends = []
    for game in same_but_for_the_deck_order():
        batch = game.batch.copy()
        batch.playout(rng=0)
        ends.append(batch.state.tobytes())
    assert ends[0] != ends[1]


def test_mcts_spends_its_budget_over_several_dealings() -> None:
    game = draft_position()
    agent = DraftMCTSAgent("230", seed=0, deal_simulations=50)
    action = agent.act_game(game)
    assert action in game.legal_actions()
    assert agent.last_simulations == 230 == agent.root_visits.sum()


def test_mcts_on_a_clock_searches_until_it_runs_out() -> None:
    agent = DraftMCTSAgent("0.05s", seed=0)
    game = draft_position()  # three patches to choose from
    assert agent.act_game(game) in game.legal_actions()
    assert agent.last_simulations > 0


def test_mcts_plays_a_lone_choice_without_searching() -> None:
    # only slot 1's patch (XX, cost 2) is affordable: the greedy placement, no simulation
    game = draft_position(row=(6, 0, 19), buttons=(2, 5))
    agent = DraftMCTSAgent("100", seed=0)
    assert agent.act_game(game) == DraftGreedyAgent().act_game(game)
    assert agent.last_simulations == 0


def test_mcts_leaves_the_game_it_searches_as_it_was() -> None:
    game, _ = same_but_for_the_deck_order()
    before = game.state_dict()
    DraftMCTSAgent("60", seed=1).act_game(game)
    assert game.state_dict() == before
