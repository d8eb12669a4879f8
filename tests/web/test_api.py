"""The web server's JSON API, through Starlette's test client: games held server-side,
every bad request a 4xx with a message, agents thinking off the event loop."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the web extra is not installed")
pytest.importorskip("httpx", reason="Starlette's test client needs httpx")

from starlette.testclient import TestClient

from patchwork_env.agents.random_agent import RandomAgent
from patchwork_env.data.actions import ADVANCE, LEATHER_BASE, N_CELLS, SLOT_STRIDE
from patchwork_env.views.game import Game
from patchwork_env.web.app import create_app
from patchwork_env.web.server import LOOPBACK_HOSTS


@pytest.fixture
def client() -> TestClient:
    return TestClient(create_app(opponent="random", seed=0))


def new_game(client: TestClient, **settings) -> dict:
    answer = client.post("/api/games", json={"opponent": "random", **settings})
    assert answer.status_code == 201, answer.text
    return answer.json()


def human_turn(client: TestClient, state: dict) -> dict:
    """``state`` after the agent's moves, up to the person's turn or the end."""
    while state["agent_to_move"]:
        answer = client.post(f"/api/games/{state['id']}/agent")
        assert answer.status_code == 200, answer.text
        state = answer.json()
    return state


def error(answer, status: int) -> str:
    assert answer.status_code == status, (answer.status_code, answer.text)
    message = answer.json()["error"]
    assert message and "\n" not in message and "Traceback" not in message
    return message


def test_a_new_game_answers_its_state(client: TestClient) -> None:
    state = new_game(client, seed=11, seat=1, rules="classic")
    assert (state["seed"], state["seat"], state["rules"]) == (11, 1, "classic")
    assert state["players"][1]["name"] == "you" and state["players"][0]["name"] == "random"
    assert len(state["players"][0]["quilt"]) == N_CELLS
    assert state["track"]["leather"] == [20, 26, 32, 44, 50]
    game = Game.new(11, rules="classic")
    assert state["circle"] == game.circle and state["to_move"] == game.to_move


def test_malformed_json_is_refused_with_a_400(client: TestClient) -> None:
    for body in (b"{", b"\xff\xfe", b"[1, 2]", b'"text"'):
        error(client.post("/api/games", content=body), 400)
    game = new_game(client, seed=1)
    error(client.post(f"/api/games/{game['id']}/move", content=b"{not json"), 400)


def test_bad_settings_of_a_new_game_are_refused_by_name(client: TestClient) -> None:
    cases = {"seat": ({"seat": 2}, "seat"), "seed": ({"seed": -1}, "seed"),
             "bool": ({"seed": True}, "seed"), "rules": ({"rules": "nope"}, "rules preset"),
             "agent": ({"opponent": "nope"}, "unknown agent"),
             "file": ({"opponent": "az:/etc/passwd:64"}, "reads a file"),
             "human": ({"opponent": "human"}, "terminal"),
             "field": ({"colour": "red"}, "unknown fields")}
    for name, (body, words) in cases.items():
        assert words in error(client.post("/api/games", json=body), 400), name


def test_a_body_over_the_limit_is_refused(client: TestClient) -> None:
    assert "too large" in error(client.post("/api/games", content=b" " * 5000 + b"{}"), 400)


def test_an_unknown_game_id_is_a_404(client: TestClient) -> None:
    for method, path in (("GET", ""), ("GET", "/legal"), ("POST", "/move"),
                         ("POST", "/agent"), ("POST", "/undo")):
        answer = client.request(method, f"/api/games/nope{path}", json={"action": ADVANCE})
        assert "no game 'nope'" in error(answer, 404)


def test_an_unknown_path_is_a_404_with_a_message(client: TestClient) -> None:
    assert "Not Found" in error(client.get("/api/nothing"), 404)


def test_an_illegal_move_is_a_422_saying_why_and_changes_nothing(client: TestClient) -> None:
    state = human_turn(client, new_game(client, seed=3))
    path = f"/api/games/{state['id']}"
    message = error(client.post(f"{path}/move", json={"action": LEATHER_BASE}), 422)
    assert "no leather patch is pending" in message
    assert client.get(path).json() == state


def test_a_placement_that_overlaps_the_quilt_is_refused(client: TestClient) -> None:
    state = human_turn(client, new_game(client, seed=3))
    buys = [a for a in state["legal"] if a < ADVANCE]
    first = min(buys)
    state = human_turn(client, client.post(f"/api/games/{state['id']}/move",
                                           json={"action": first}).json())
    slot = next(a // SLOT_STRIDE for a in state["legal"] if a < ADVANCE)
    answer = client.post(f"/api/games/{state['id']}/move",
                         json={"slot": slot, "orientation": 0, "anchor": 0})
    assert "it overlaps your quilt at" in error(answer, 422)
    assert client.get(f"/api/games/{state['id']}").json() == state


def test_a_move_on_the_agents_turn_is_a_409(client: TestClient) -> None:
    state = new_game(client, seed=0, seat=1)
    if not state["agent_to_move"]:
        state = new_game(client, seed=0, seat=0)
    assert state["agent_to_move"]
    answer = client.post(f"/api/games/{state['id']}/move", json={"action": ADVANCE})
    assert "agent's turn" in error(answer, 409)


def test_a_move_is_taken_by_id_notation_or_placement(client: TestClient) -> None:
    for form in ({"action": ADVANCE}, {"move": "advance"}):
        state = human_turn(client, new_game(client, seed=4))
        answer = client.post(f"/api/games/{state['id']}/move", json=form)
        assert answer.json()["moves"][-1]["notation"] == "advance"
    state = human_turn(client, new_game(client, seed=4))
    patches = client.get("/api/catalogue").json()["patches"]
    # a placement may name any orientation of the shape; the move names its lowest
    slot, turned, lowest = next(
        (s, o, entry["canonical"]) for s in range(3) for o, entry in
        enumerate(patches[state["circle"][s]]["orientations"])
        if entry["canonical"] != o and any(a // SLOT_STRIDE == s for a in state["legal"]))
    anchor = next(a % N_CELLS for a in state["legal"]
                  if a // SLOT_STRIDE == slot and (a % SLOT_STRIDE) // N_CELLS == lowest)
    answer = client.post(f"/api/games/{state['id']}/move",
                         json={"slot": slot, "orientation": turned, "anchor": anchor})
    assert answer.status_code == 200, answer.text
    assert answer.json()["moves"][-1]["action"] == slot * SLOT_STRIDE + lowest * N_CELLS + anchor


def test_bad_moves_are_refused_by_name(client: TestClient) -> None:
    state = human_turn(client, new_game(client, seed=4))
    path = f"/api/games/{state['id']}/move"
    assert "action must be" in error(client.post(path, json={"action": 5000}), 400)
    assert "cannot read move" in error(client.post(path, json={"move": "jump"}), 400)
    assert "orientation must be" in error(
        client.post(path, json={"slot": 0, "orientation": 9, "anchor": 0}), 400)
    assert "a move is" in error(client.post(path, json={"action": 1, "move": "advance"}), 400)


def test_legal_lists_the_anchors_of_a_patch_in_an_orientation(client: TestClient) -> None:
    state = human_turn(client, new_game(client, seed=5))
    path = f"/api/games/{state['id']}/legal"
    actions = client.get(path).json()["actions"]
    assert actions == state["legal"]
    slot = next(a // SLOT_STRIDE for a in actions if a < ADVANCE)
    answer = client.get(path, params={"slot": slot, "orientation": 0}).json()
    expected = [a for a in actions if slot * SLOT_STRIDE <= a < slot * SLOT_STRIDE + N_CELLS]
    assert [action for _, action in answer["anchors"]] == expected
    assert all(action % N_CELLS == anchor for anchor, action in answer["anchors"])
    assert "slot must be" in error(client.get(path, params={"slot": 7, "orientation": 0}), 400)


def test_undo_goes_back_to_before_the_persons_last_move(client: TestClient) -> None:
    state = human_turn(client, new_game(client, seed=6))
    path = f"/api/games/{state['id']}"
    assert "no move of yours" in error(client.post(f"{path}/undo"), 409)
    moved = human_turn(client, client.post(f"{path}/move", json={"action": ADVANCE}).json())
    assert len(moved["moves"]) > len(state["moves"])
    back = client.post(f"{path}/undo").json()
    assert {**back, "can_undo": False} == {**state, "can_undo": False}


def play_to_the_end(client: TestClient, seed: int) -> dict:
    """A whole game against random through the API, the person's moves random too."""
    rng = np.random.default_rng(seed)
    state = human_turn(client, new_game(client, seed=seed))
    while not state["over"]:
        action = int(rng.choice(state["legal"]))
        answer = client.post(f"/api/games/{state['id']}/move", json={"action": action})
        assert answer.status_code == 200, answer.text
        state = human_turn(client, answer.json())
    return state


def test_a_whole_game_against_random_ends_with_its_score_broken_down(client) -> None:
    state = play_to_the_end(client, seed=7)
    assert state["legal"] == [] and state["winner"] in (0, 1)
    for player, part in zip(state["players"], state["final"], strict=True):
        assert part["total"] == player["score"]
        assert part["total"] == part["buttons"] + part["empty_penalty"] + part["bonus"]
        assert part["empty_cells"] == player["quilt"].count(-1)


def test_concurrent_games_stay_apart(client: TestClient) -> None:
    seeds = [21, 22, 23, 24]
    with ThreadPoolExecutor(len(seeds)) as pool:
        finals = list(pool.map(lambda s: play_to_the_end(client, s), seeds))
    for seed, state in zip(seeds, finals, strict=True):
        game = Game.new(seed)
        for move in state["moves"]:
            game.step(move["action"])
        assert game.is_over and list(game.scores()) == [p["score"] for p in state["players"]]


class WaitingAgent(RandomAgent):
    """A random agent that thinks until the test lets it go."""

    def __init__(self, go: threading.Event) -> None:
        super().__init__(0)
        self.go = go
        self.started = threading.Event()

    def act(self, batch, rows):
        self.started.set()
        assert self.go.wait(30)
        return super().act(batch, rows)


def test_a_thinking_agent_holds_up_no_other_request() -> None:
    go = threading.Event()
    agents: list[WaitingAgent] = []

    def factory(spec: str, seed: int, game: str = "patchwork") -> WaitingAgent:
        agents.append(WaitingAgent(go))
        return agents[-1]

    client = TestClient(create_app(opponent="random", factory=factory))
    state = new_game(client, seed=0, seat=1)
    if not state["agent_to_move"]:
        state = new_game(client, seed=0, seat=0)
    other = new_game(client, seed=1)
    path = f"/api/games/{state['id']}"
    with ThreadPoolExecutor(1) as pool:
        thinking = pool.submit(client.post, f"{path}/agent")
        assert agents[-2].started.wait(10)
        assert client.get(f"/api/games/{other['id']}").status_code == 200
        assert client.get(path).json()["thinking"] is True
        assert "already thinking" in error(client.post(f"{path}/agent"), 409)
        assert "agent is thinking" in error(client.post(f"{path}/undo"), 409)
        go.set()
        assert thinking.result(timeout=30).status_code == 200
    assert len(client.get(path).json()["moves"]) == 1


def test_the_games_held_are_capped() -> None:
    app = create_app(opponent="random", max_games=2)
    client = TestClient(app)
    first, *_ = [new_game(client, seed=s) for s in range(3)]
    assert len(app.state.store) == 2
    error(client.get(f"/api/games/{first['id']}"), 404)


def test_no_file_outside_the_static_folder_is_served(client: TestClient) -> None:
    assert client.get("/static/play.js").status_code == 200
    for path in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/..%2fapp.py",
                 "/static/%2e%2e%2f%2e%2e%2fpyproject.toml", "/static//etc/passwd",
                 "/static/%2fetc%2fpasswd", "/static/..\\app.py", "/app.py", "/web/app.py"):
        answer = client.get(path)
        assert answer.status_code == 404, path
        assert "def create_app" not in answer.text and "root:" not in answer.text


def test_the_page_is_served_with_its_files_and_a_strict_policy(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "/static/play.js" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    for name in ("play.js", "play.css"):
        assert client.get(f"/static/{name}").status_code == 200


def test_a_loopback_server_answers_only_loopback_names() -> None:
    app = create_app(opponent="random", allowed_hosts=LOOPBACK_HOSTS)
    assert TestClient(app, base_url="http://127.0.0.1:8000").get("/").status_code == 200
    assert TestClient(app, base_url="http://attacker.example").get("/").status_code == 400


def test_a_new_game_waits_when_every_held_game_is_thinking() -> None:
    go = threading.Event()
    agents: list[WaitingAgent] = []

    def factory(spec: str, seed: int, game: str = "patchwork") -> WaitingAgent:
        agents.append(WaitingAgent(go))
        return agents[-1]

    client = TestClient(create_app(opponent="random", factory=factory, max_games=1))
    state = new_game(client, seed=0, seat=1)
    if not state["agent_to_move"]:
        state = new_game(client, seed=0, seat=0)
    with ThreadPoolExecutor(1) as pool:
        thinking = pool.submit(client.post, f"/api/games/{state['id']}/agent")
        assert agents[-1].started.wait(10)
        assert "busy" in error(client.post("/api/games", json={"seed": 1}), 503)
        go.set()
        assert thinking.result(timeout=30).status_code == 200
    assert client.get(f"/api/games/{state['id']}").status_code == 200
