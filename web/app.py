"""The web application: the page's static files and a small JSON API over the games.

=======================================  ===============================================
request                                  answer
=======================================  ===============================================
``GET /``                                the page
``GET /static/FILE``                     the page's script and style (nothing else)
``GET /api/config``                      the first game's settings, agents to offer
``GET /api/catalogue``                   the patches, colours and rules presets
``POST /api/games``                      a new game: ``{seed, seat, opponent, rules}``
                                         (each optional); 201 and its state
``GET /api/games/ID``                    the game's state (legal actions included)
``GET /api/games/ID/legal``              its legal actions; with ``?slot=S&orientation=O``
                                         the anchors where that patch fits, and their
                                         actions
``POST /api/games/ID/move``              the person's move: ``{"action": A}``,
                                         ``{"move": "buy slot 1 o3 at c4"}`` or
                                         ``{"slot": S, "orientation": O, "anchor": C}``
``POST /api/games/ID/agent``             the agent's next move
``POST /api/games/ID/undo``              back to before the person's last move
=======================================  ===============================================

Errors are ``{"error": "one line"}`` with status 400 (malformed request), 404 (unknown
game or path), 409 (not now: the agent's turn, the agent thinking, nothing to undo), 422
(an illegal move, saying why) or 503 (every held game busy). Agents think in worker
threads, so a slow one holds up no other request.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from patchwork_env.agents import AgentSpecError, make
from patchwork_env.data.actions import N_ACTIONS, N_CELLS, N_ORIENTATIONS, N_SLOTS, SLOT_STRIDE
from patchwork_env.data.actions import parse_action as parse_notation
from patchwork_env.data.patches import PATCHES
from patchwork_env.data.rules import PRESETS
from patchwork_env.web.games import AgentFactory, BadRequest, Store, WebError
from patchwork_env.web.state import canonical_orientation, catalogue, position

STATIC = Path(__file__).with_name("static")
"""The page's files: the only files the server sends."""
MAX_BODY = 4096
"""Bytes a request body may hold."""
SUGGESTED_AGENTS = ("random", "greedy", "mcts:200", "mcts:1s", "az", "az-policy", "ppo")
"""Agents the page offers besides the command line's."""
SEED_LIMIT = 2**63
HEADERS = {"Content-Security-Policy": "default-src 'self'; img-src 'self' data:",
           "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}


def names_a_file(spec: str) -> bool:
    """Whether an agent spec reads a file (a network's path), which only the command line
    may choose."""
    return any(c in spec for c in "/\\") or any(
        part.endswith((".pt", ".zip")) for part in spec.replace("@", ":").split(":"))


def default_factory(spec: str, seed: int) -> Any:
    """``agents.make(spec, seed)``, its problems (a missing extra too) as one line."""
    try:
        return make(spec, seed)
    except AgentSpecError as e:
        raise BadRequest(str(e)) from None
    except ImportError as e:
        raise BadRequest(f"agent {spec!r} needs a package that is not installed ({e.name}): "
                         "pip install -e \".[train]\"") from None


async def read_json(request: Request) -> dict[str, Any]:
    """The request's body as a JSON object (an empty body is ``{}``); :class:`BadRequest`
    for anything else."""
    body = await request.body()
    if len(body) > MAX_BODY:
        raise BadRequest(f"request body too large ({len(body)} bytes; at most {MAX_BODY})")
    if not body.strip():
        return {}
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise BadRequest(f"malformed JSON: {e}") from None
    if not isinstance(data, dict):
        raise BadRequest(f"expected a JSON object, got {type(data).__name__}")
    return data


def int_field(data: dict[str, Any], key: str, low: int, high: int) -> int:
    """``data[key]`` as an int in ``low..high - 1``; :class:`BadRequest` naming the field."""
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value < high:
        raise BadRequest(f"{key} must be an integer in {low}..{high - 1}, got {value!r}")
    return value


def query_int(request: Request, key: str, high: int) -> int:
    """Query parameter ``key`` as an int in ``0..high - 1``."""
    text = request.query_params[key]
    if not text.isdigit() or int(text) >= high:
        raise BadRequest(f"{key} must be an integer in 0..{high - 1}, got {text!r}")
    return int(text)


def move_action(data: dict[str, Any], circle: list[int]) -> int:
    """The action a move request names (see the module's table)."""
    if set(data) == {"action"}:
        return int_field(data, "action", 0, N_ACTIONS)
    if set(data) == {"move"}:
        if not isinstance(data["move"], str):
            raise BadRequest(f"move must be text, got {data['move']!r}")
        try:
            return parse_notation(data["move"])
        except ValueError as e:
            raise BadRequest(str(e)) from None
    if set(data) == {"slot", "orientation", "anchor"}:
        slot = int_field(data, "slot", 0, N_SLOTS)
        orientation = int_field(data, "orientation", 0, N_ORIENTATIONS)
        anchor = int_field(data, "anchor", 0, N_CELLS)
        if slot < len(circle):
            orientation = canonical_orientation(PATCHES[circle[slot]], orientation)
        return slot * SLOT_STRIDE + orientation * N_CELLS + anchor
    raise BadRequest("a move is {\"action\": A}, {\"move\": \"NOTATION\"} or "
                     f"{{\"slot\": S, \"orientation\": O, \"anchor\": C}}, got keys {sorted(data)}")


def create_app(*, opponent: str = "greedy", seed: int | None = None, seat: int = 0,
               rules: str = "default", max_games: int = 32,
               factory: AgentFactory = default_factory,
               allowed_hosts: Sequence[str] | None = None) -> Starlette:
    """The application. ``opponent``, ``seed``, ``seat`` and ``rules`` are the first
    game's settings (a spec that reads a file is accepted from here only); ``max_games``
    caps the games held; ``allowed_hosts`` (``None``: any) the ``Host`` headers answered."""
    store = Store(factory, max_games)
    agents = tuple(dict.fromkeys((opponent, *SUGGESTED_AGENTS)))

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    async def config(request: Request) -> Response:
        return JSONResponse({"seed": seed, "seat": seat, "opponent": opponent, "rules": rules,
                             "agents": list(agents), "presets": list(PRESETS)})

    async def patches(request: Request) -> Response:
        return JSONResponse(catalogue())

    async def new_game(request: Request) -> Response:
        data = await read_json(request)
        unknown = set(data) - {"seed", "seat", "opponent", "rules"}
        if unknown:
            raise BadRequest(f"unknown fields {sorted(unknown)}: a new game takes seed, seat, "
                             "opponent and rules")
        game_seed = (int_field(data, "seed", 0, SEED_LIMIT) if data.get("seed") is not None
                     else secrets.randbelow(2**31))
        game_seat = int_field(data, "seat", 0, 2) if "seat" in data else seat
        spec = data.get("opponent", opponent)
        if not isinstance(spec, str) or not spec.strip():
            raise BadRequest(f"opponent must be an agent spec, got {spec!r}")
        spec = spec.strip()
        if spec.split(":")[0] == "human":
            raise BadRequest("the opponent is an agent: 'human' plays at the terminal only")
        if names_a_file(spec) and spec not in agents:
            raise BadRequest(f"opponent {spec!r} reads a file: name it with patchwork-play "
                             "--web --opponent")
        preset = data.get("rules", rules)
        if preset not in PRESETS:
            raise BadRequest(f"unknown rules preset {preset!r}: choose from "
                             f"{', '.join(PRESETS)}")
        session = await run_in_threadpool(store.create, game_seed, game_seat, spec, preset)
        return state_response(session, status=201)

    def state_response(session: Any, status: int = 200) -> Response:
        with session.lock:
            return JSONResponse(position(session), status_code=status)

    async def show(request: Request) -> Response:
        return state_response(store.get(request.path_params["game_id"]))

    async def legal(request: Request) -> Response:
        session = store.get(request.path_params["game_id"])
        with session.lock:
            game, human = session.game, not session.agent_to_move
            actions = game.legal_actions().tolist() if human else []
            circle = game.circle
        params = request.query_params
        if not {"slot", "orientation"} & set(params):
            return JSONResponse({"actions": actions})
        slot = query_int(request, "slot", N_SLOTS)
        orientation = query_int(request, "orientation", N_ORIENTATIONS)
        if slot >= len(circle):
            raise BadRequest(f"slot {slot} is empty: the circle holds {len(circle)} patches")
        code = canonical_orientation(PATCHES[circle[slot]], orientation)
        base = slot * SLOT_STRIDE + code * N_CELLS
        anchors = [[a - base, a] for a in actions if base <= a < base + N_CELLS]
        return JSONResponse({"slot": slot, "orientation": orientation, "canonical": code,
                             "anchors": anchors})

    async def move(request: Request) -> Response:
        session = store.get(request.path_params["game_id"])
        data = await read_json(request)
        with session.lock:
            circle = session.game.circle
        session.play_human(move_action(data, circle))
        return state_response(session)

    async def agent_move(request: Request) -> Response:
        session = store.get(request.path_params["game_id"])
        await run_in_threadpool(session.play_agent)
        return state_response(session)

    async def undo(request: Request) -> Response:
        session = store.get(request.path_params["game_id"])
        session.undo()
        return state_response(session)

    routes = [
        Route("/", page),
        Route("/api/config", config),
        Route("/api/catalogue", patches),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{game_id}", show),
        Route("/api/games/{game_id}/legal", legal),
        Route("/api/games/{game_id}/move", move, methods=["POST"]),
        Route("/api/games/{game_id}/agent", agent_move, methods=["POST"]),
        Route("/api/games/{game_id}/undo", undo, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    middleware = [Middleware(SecurityHeaders)]
    if allowed_hosts is not None:
        middleware.insert(0, Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts)))
    app = Starlette(routes=routes, middleware=middleware, exception_handlers={
        WebError: web_error, HTTPException: http_error, Exception: server_error})
    app.state.store = store
    return app


class SecurityHeaders:
    """ASGI middleware adding :data:`HEADERS` to every response: the page may load
    nothing from elsewhere, and no answer is cached."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], *(
                    (k.lower().encode(), v.encode()) for k, v in HEADERS.items())]
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def web_error(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": str(exc)}, status_code=getattr(exc, "status", 400))


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return JSONResponse({"error": f"{exc.detail}: {request.url.path}"},
                        status_code=exc.status_code)


async def server_error(request: Request, exc: Exception) -> Response:
    message = " ".join(f"{type(exc).__name__}: {exc}".split())
    return JSONResponse({"error": f"internal error: {message}"}, status_code=500)
