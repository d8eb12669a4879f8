"""The web server's JSON API playing Patchwork Draft (section 13 of the rules): whole games,
the draft's illegal moves, its discards, its agents, and a deck order never sent."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the web extra is not installed")
pytest.importorskip("httpx", reason="Starlette's test client needs httpx")

from starlette.testclient import TestClient

from patchwork_env.data.actions import N_CELLS, SLOT_STRIDE
from patchwork_env.data.draft_actions import DISCARD_BASE, format_draft_action
from patchwork_env.data.patches import PATCHES
from patchwork_env.views.draft_game import DraftGame
from patchwork_env.web.app import create_app
from tests.web.test_api import error, human_turn


@pytest.fixture
def client() -> TestClient:
    return TestClient(create_app(opponent="random", seed=0))


def new_draft(client: TestClient, **settings) -> dict:
    answer = client.post("/api/games", json={"game": "draft", "opponent": "random",
                                             **settings})
    assert answer.status_code == 201, answer.text
    return answer.json()


def play_draft(client: TestClient, seed: int, visit: Any = None) -> dict:
    """A whole draft game against random through the API, the person's moves random too;
    ``visit(state)`` sees each state where the person moves."""
    rng = np.random.default_rng(seed)
    state = human_turn(client, new_draft(client, seed=seed))
    while not state["over"]:
        if visit:
            visit(state)
        answer = client.post(f"/api/games/{state['id']}/move",
                             json={"action": int(rng.choice(state["legal"]))})
        assert answer.status_code == 200, answer.text
        state = human_turn(client, answer.json())
    return state


def test_a_whole_draft_game_ends_with_its_score_broken_down(client: TestClient) -> None:
    state = play_draft(client, seed=3)
    assert state["game"] == "draft" and state["legal"] == [] and state["winner"] in (0, 1)
    game = DraftGame.new(3)
    for move in state["moves"]:
        assert move["notation"] == format_draft_action(move["action"])
        game.step(move["action"])
    assert game.is_over and list(game.scores()) == [p["score"] for p in state["players"]]
    for player, part in zip(state["players"], state["final"], strict=True):
        assert part["total"] == player["score"]
        assert part["total"] == part["line_points"] + part["star_points"] + part["buttons"]
        assert part["line_points"] == len(player["full_rows"]) + len(player["full_cols"])
        assert part["line_points"] + part["star_points"] == player["points"]


def test_the_tie_rule_names_the_second_player(client: TestClient) -> None:
    for seed in range(40):
        state = play_draft(client, seed)
        scores = [p["score"] for p in state["players"]]
        if scores[0] == scores[1]:
            assert state["winner"] == 1 - state["first_player"]
            assert "moved second" in state["status"]
            return
    pytest.skip("no tie in the games tried")


def test_a_discard_is_offered_only_when_no_patch_can_be_bought(client: TestClient) -> None:
    seen = {"discard": 0, "buy": 0}

    def check(state: dict) -> None:
        buys = [a for a in state["legal"] if a < DISCARD_BASE]
        discards = [a for a in state["legal"] if a >= DISCARD_BASE]
        assert bool(buys) != bool(discards)
        seen["discard" if discards else "buy"] += 1

    for seed in (3, 4):
        play_draft(client, seed, check)
    assert seen["discard"] and seen["buy"]


def buy_then_wait(client: TestClient, seed: int) -> dict:
    """A draft game where the person has bought a patch and can buy another."""
    state = human_turn(client, new_draft(client, seed=seed))
    state = human_turn(client, client.post(f"/api/games/{state['id']}/move",
                                           json={"action": min(state["legal"])}).json())
    assert any(a < DISCARD_BASE for a in state["legal"]), "the person cannot buy now"
    return state


def test_illegal_draft_moves_are_a_422_naming_the_rule(client: TestClient) -> None:
    state = buy_then_wait(client, seed=10)
    path = f"/api/games/{state['id']}"
    slot = next(a // SLOT_STRIDE for a in state["legal"] if a < DISCARD_BASE)
    overlap = client.post(f"{path}/move", json={"slot": slot, "orientation": 0, "anchor": 0})
    assert "overlaps your quilt at" in error(overlap, 422)
    discard = client.post(f"{path}/move", json={"move": f"discard slot {slot}"})
    assert "rule 13.6" in error(discard, 422)
    me = state["players"][state["seat"]]
    costly = [s for s, p in enumerate(state["face_up"]) if PATCHES[p].cost > me["buttons"]]
    answer = client.post(f"{path}/move", json={"action": costly[0] * SLOT_STRIDE + 40})
    assert "rule 13.2" in error(answer, 422)
    assert client.get(path).json() == state


def test_a_draft_move_is_taken_in_the_drafts_notation(client: TestClient) -> None:
    state = human_turn(client, new_draft(client, seed=5))
    action = state["legal"][len(state["legal"]) // 2]
    answer = client.post(f"/api/games/{state['id']}/move",
                         json={"move": format_draft_action(action)})
    assert answer.status_code == 200, answer.text
    assert answer.json()["moves"][len(state["moves"])]["action"] == action


def test_legal_lists_the_anchors_of_a_face_up_patch(client: TestClient) -> None:
    state = human_turn(client, new_draft(client, seed=5))
    slot = next(a // SLOT_STRIDE for a in state["legal"] if a < DISCARD_BASE)
    answer = client.get(f"/api/games/{state['id']}/legal",
                        params={"slot": slot, "orientation": 0}).json()
    expected = [a for a in state["legal"]
                if slot * SLOT_STRIDE <= a < slot * SLOT_STRIDE + N_CELLS]
    assert [action for _, action in answer["anchors"]] == expected


def lists_in(value: Any) -> list[list]:
    """Every list inside a JSON value."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in lists_in(v)]
    if isinstance(value, list):
        return [value, *(x for v in value for x in lists_in(v))]
    return []


def test_no_answer_holds_the_decks_order() -> None:
    app = create_app(opponent="random")
    client = TestClient(app)
    state = new_draft(client, seed=9, seat=1)
    path = f"/api/games/{state['id']}"
    ask = [lambda: state, lambda: human_turn(client, state), lambda: client.get(path).json(),
           lambda: client.get(f"{path}/legal").json()]
    for request in ask:
        answer = request()
        order = app.state.store.get(state["id"]).game.state_dict()["deck"]
        assert order != sorted(order)
        assert "deck" not in answer
        assert all(x != order for x in lists_in(answer))
    assert client.get(path).json()["deck_patches"] == sorted(order)


def test_a_patchwork_only_agent_or_preset_is_refused_for_the_draft(client: TestClient) -> None:
    cases = {"az": ({"opponent": "az"}, "no az network is shipped for the draft game"),
             "ppo": ({"opponent": "ppo"}, "does not play Patchwork Draft"),
             "rules": ({"opponent": "random", "rules": "classic"}, "no-stars"),
             "game": ({"game": "chess"}, "unknown game")}
    for name, (body, words) in cases.items():
        answer = client.post("/api/games", json={"game": "draft", **body})
        assert words in error(answer, 400), name


def test_config_offers_each_games_presets_and_agents() -> None:
    config = TestClient(create_app(opponent="mcts:50", game="draft")).get("/api/config").json()
    assert config["game"] == "draft" and config["agents"][0] == "mcts:50"
    assert config["games"]["draft"]["presets"] == ["default", "no-stars"]
    assert "az" in config["games"]["patchwork"]["agents"]
    assert "az" not in config["games"]["draft"]["agents"]


def test_undo_takes_back_a_draft_move_and_the_reply(client: TestClient) -> None:
    state = human_turn(client, new_draft(client, seed=5))
    path = f"/api/games/{state['id']}"
    moved = human_turn(client, client.post(f"{path}/move",
                                           json={"action": state["legal"][0]}).json())
    assert len(moved["moves"]) > len(state["moves"])
    back = client.post(f"{path}/undo").json()
    assert {**back, "can_undo": False} == {**state, "can_undo": False}
