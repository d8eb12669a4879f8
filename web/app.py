"""The web application: the page's static files and a small JSON API over the games.

=======================================  ===============================================
request                                  answer
=======================================  ===============================================
``GET /``                                the page
``GET /static/FILE``                     the page's script and style (nothing else)
``GET /api/config``                      the first game's settings; each game's title,
                                         rules presets and agents to offer
``GET /api/catalogue``                   the patches, colours and rules presets
``POST /api/games``                      a new game: ``{game, seed, seat, opponent,
                                         rules}`` (each optional; ``game``:
                                         ``patchwork`` or ``draft``); 201 and its state
``GET /api/games/ID``                    the game's state (legal actions included)
``GET /api/games/ID/legal``              its legal actions; with ``?slot=S&orientation=O``
                                         the anchors where that patch fits, and their
                                         actions
``POST /api/games/ID/move``              the person's move: ``{"action": A}``,
                                         ``{"move": "buy slot 1 o3 at c4"}`` (or
                                         ``"discard slot 2"`` in the draft) or
                                         ``{"slot": S, "orientation": O, "anchor": C}``
``POST /api/games/ID/agent``             the agent's next move
``POST /api/games/ID/undo``              back to before the person's last move
=======================================  ===============================================

Errors are ``{"error": "one line"}`` with status 400 (malformed request), 404 (unknown
game or path), 409 (not now: the agent's turn, the agent thinking, nothing to undo), 422
(an illegal move, saying why) or 503 (every held game busy). Agents think in worker
threads, so a slow one holds up no other request.

A game's state holds what both games share (``game``, ``seed``, ``seat``, ``to_move``,
``over``, ``winner``, ``legal``, ``moves``, ``can_undo``, ...) and what its kind adds:
the time track and circle of Patchwork, or the face-up row, the deck's size and its
patches (sorted: the deck's order is never sent) and the stars of Patchwork Draft
(:mod:`patchwork_env.web.kinds`).
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
from patchwork_env.data.actions import N_CELLS, N_ORIENTATIONS, N_SLOTS, SLOT_STRIDE
from patchwork_env.data.patches import PATCHES
from patchwork_env.web.games import AgentFactory, BadRequest, Store, WebError
from patchwork_env.web.kinds import WEB_GAMES, WebGame
from patchwork_env.web.state import catalogue, position

STATIC = Path(__file__).with_name("static")
"""The page's files: the only files the server sends."""
MAX_BODY = 4096
"""Bytes a request body may hold."""
SEED_LIMIT = 2**63
HEADERS = {"Content-Security-Policy": "default-src 'self'; img-src 'self' data:",
           "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}


def names_a_file(spec: str) -> bool:
    """Whether an agent spec reads a file (a network's path), which only the command line
    may choose."""
    return any(c in spec for c in "/\\") or any(
        part.endswith((".pt", ".zip")) for part in spec.replace("@", ":").split(":"))


def default_factory(spec: str, seed: int, game: str = "patchwork") -> Any:
    """``agents.make(spec, seed, game=game)``, its problems (a missing extra too) as one
    line."""
    try:
        return make(spec, seed, game=game)
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


def move_action(data: dict[str, Any], kind: WebGame, offer: list[int | None]) -> int:
    """The action a move request names (see the module's table) in ``kind``'s game, whose
    slots hold the patches ``offer``."""
    if set(data) == {"action"}:
        return int_field(data, "action", 0, kind.n_actions)
    if set(data) == {"move"}:
        if not isinstance(data["move"], str):
            raise BadRequest(f"move must be text, got {data['move']!r}")
        try:
            return kind.parse(data["move"])
        except ValueError as e:
            raise BadRequest(str(e)) from None
    if set(data) == {"slot", "orientation", "anchor"}:
        slot = int_field(data, "slot", 0, N_SLOTS)
        orientation = int_field(data, "orientation", 0, N_ORIENTATIONS)
        anchor = int_field(data, "anchor", 0, N_CELLS)
        if offer[slot] is not None:
            orientation = PATCHES[offer[slot]].canonical(orientation)
        return slot * SLOT_STRIDE + orientation * N_CELLS + anchor
    raise BadRequest("a move is {\"action\": A}, {\"move\": \"NOTATION\"} or "
                     f"{{\"slot\": S, \"orientation\": O, \"anchor\": C}}, got keys {sorted(data)}")


def create_app(*, opponent: str = "greedy", seed: int | None = None, seat: int = 0,
               rules: str = "default", game: str = "patchwork", max_games: int = 32,
               factory: AgentFactory = default_factory,
               allowed_hosts: Sequence[str] | None = None) -> Starlette:
    """The application. ``game`` (``patchwork`` or ``draft``), ``opponent``, ``seed``,
    ``seat`` and ``rules`` are the first game's settings (a spec that reads a file is
    accepted from here only); ``max_games`` caps the games held; ``allowed_hosts``
    (``None``: any) the ``Host`` headers answered."""
    if game not in WEB_GAMES:
        raise ValueError(f"unknown game {game!r}: choose from {', '.join(WEB_GAMES)}")
    store = Store(factory, max_games)
    agents = {name: list(dict.fromkeys((opponent, *kind.agents) if name == game
                                       else kind.agents)) for name, kind in WEB_GAMES.items()}
    own_specs = {opponent}

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    async def config(request: Request) -> Response:
        return JSONResponse({
            "game": game, "seed": seed, "seat": seat, "opponent": opponent, "rules": rules,
            "agents": agents[game], "presets": list(WEB_GAMES[game].presets),
            "games": {name: {"title": kind.title, "agents": agents[name],
                             "presets": list(kind.presets)}
                      for name, kind in WEB_GAMES.items()}})

    async def patches(request: Request) -> Response:
        return JSONResponse(catalogue())

    async def new_game(request: Request) -> Response:
        data = await read_json(request)
        unknown = set(data) - {"game", "seed", "seat", "opponent", "rules"}
        if unknown:
            raise BadRequest(f"unknown fields {sorted(unknown)}: a new game takes game, seed, "
                             "seat, opponent and rules")
        name = data.get("game", game)
        if name not in WEB_GAMES:
            raise BadRequest(f"unknown game {name!r}: choose from {', '.join(WEB_GAMES)}")
        kind = WEB_GAMES[name]
        game_seed = (int_field(data, "seed", 0, SEED_LIMIT) if data.get("seed") is not None
                     else secrets.randbelow(2**31))
        game_seat = int_field(data, "seat", 0, 2) if "seat" in data else seat
        spec = data.get("opponent", opponent)
        if not isinstance(spec, str) or not spec.strip():
            raise BadRequest(f"opponent must be an agent spec, got {spec!r}")
        spec = spec.strip()
        if spec.split(":")[0] == "human":
            raise BadRequest("the opponent is an agent: 'human' plays at the terminal only")
        if names_a_file(spec) and spec not in own_specs:
            raise BadRequest(f"opponent {spec!r} reads a file: name it with patchwork-play "
                             "--web --opponent")
        preset = data.get("rules", rules if name == game else "default")
        if preset not in kind.presets:
            raise BadRequest(f"unknown rules preset {preset!r} for {kind.title}: choose from "
                             f"{', '.join(kind.presets)}")
        session = await run_in_threadpool(store.create, kind, game_seed, game_seat, spec,
                                          preset)
        return state_response(session, status=201)

    def state_response(session: Any, status: int = 200) -> Response:
        with session.lock:
            return JSONResponse(position(session), status_code=status)

    async def show(request: Request) -> Response:
        return state_response(store.get(request.path_params["game_id"]))

    async def legal(request: Request) -> Response:
        session = store.get(request.path_params["game_id"])
        with session.lock:
            played, human = session.game, not session.agent_to_move
            actions = played.legal_actions().tolist() if human else []
            offer = session.kind.offer(played)
        params = request.query_params
        if not {"slot", "orientation"} & set(params):
            return JSONResponse({"actions": actions})
        slot = query_int(request, "slot", N_SLOTS)
        orientation = query_int(request, "orientation", N_ORIENTATIONS)
        if offer[slot] is None:
            raise BadRequest(f"slot {slot} is empty: no patch lies there")
        code = PATCHES[offer[slot]].canonical(orientation)
        base = slot * SLOT_STRIDE + code * N_CELLS
        anchors = [[a - base, a] for a in actions if base <= a < base + N_CELLS]
        return JSONResponse({"slot": slot, "orientation": orientation, "canonical": code,
                             "anchors": anchors})

    async def move(request: Request) -> Response:
        session = store.get(request.path_params["game_id"])
        data = await read_json(request)
        with session.lock:
            offer = session.kind.offer(session.game)
        session.play_human(move_action(data, session.kind, offer))
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
