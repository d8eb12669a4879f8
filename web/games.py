"""The games a web server holds: one person against one agent each, kept server-side.

A :class:`Session` is a game (a :class:`~patchwork_env.views.game.Game` or a
:class:`~patchwork_env.views.draft_game.DraftGame`), its :class:`Kind` (how
its moves are named, described and refused), the agent that plays the other seat, the
moves played so far and the positions to go back to on an undo. Every
change goes through the game's own checks (an illegal move changes nothing); the session
only adds whose turn it is and one lock, so that the agent's move and a person's request
never touch a game at the same time (the agent thinks on a copy of the position).
:class:`Store` holds at most ``max_games`` sessions under unguessable ids, giving up the
longest idle one when a new game needs room.

Failures are :class:`WebError` subclasses carrying the HTTP status the server answers
with and a one-line message.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from patchwork_env.agents.base import Agent

AgentFactory = Callable[[str, int, str], Agent]
"""``factory(spec, seed, game) -> agent``: how a session builds its opponent (``game``:
``"patchwork"`` or ``"draft"``)."""


class Kind(Protocol):
    """What a session needs of its game's kind (:mod:`patchwork_env.web.kinds`)."""

    name: str

    def new(self, seed: int, rules: str) -> Any:
        """A new game."""

    def notation(self, action: int) -> str:
        """The move's notation."""

    def describe(self, game: Any, action: int) -> str:
        """The notation and the patch a buy or discard takes."""

    def why_illegal(self, game: Any, action: int) -> str:
        """Why ``action`` is not legal in ``game``, in one line."""

    def patch_of(self, game: Any, action: int) -> int | None:
        """The patch ``action`` takes (a buy, a discard, a leather patch), if any."""


class WebError(ValueError):
    """A request the server refuses: ``status`` is the HTTP status, the text one line."""

    status = 400


class BadRequest(WebError):
    """A request that is malformed or names a value out of range."""


class NotFound(WebError):
    """A game id the server does not hold."""

    status = 404


class Conflict(WebError):
    """A request the game cannot take now: not the person's turn, the agent busy, ..."""

    status = 409


class IllegalMove(WebError):
    """A well-formed move that the rules do not allow in the position."""

    status = 422


class Full(WebError):
    """Every game the server holds is busy, so none can make room for a new one."""

    status = 503


@dataclass
class MoveRecord:
    """One move of a session's game, as the page lists and highlights it."""

    player: int
    action: int
    notation: str
    text: str
    cells: list[int]
    patch: int | None
    by_agent: bool

    def to_json(self) -> dict[str, Any]:
        return {"player": self.player, "action": self.action, "notation": self.notation,
                "text": self.text, "cells": self.cells, "patch": self.patch,
                "by_agent": self.by_agent}


@dataclass
class Session:
    """One game of a person (``seat``) against ``agent`` (the other seat).

    ``lock`` guards each short change or reading of the game; while the agent thinks
    (``thinking``) it plays on a copy, and nothing but its own move may change the game.
    """

    id: str
    game: Any
    """A :class:`Game` or :class:`DraftGame`, as ``kind`` makes them."""
    kind: Kind
    agent: Agent
    seat: int
    seed: int
    rules: str
    opponent: str
    """The agent's spec, as the request named it."""
    moves: list[MoveRecord] = field(default_factory=list)
    undo_points: list[tuple[Any, int]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    thinking: bool = False
    touched: float = field(default_factory=time.monotonic)

    @property
    def agent_to_move(self) -> bool:
        """Whether the game waits for the agent."""
        return not self.game.is_over and self.game.to_move != self.seat

    def _record(self, action: int, by_agent: bool) -> MoveRecord:
        game, kind = self.game, self.kind
        patch = kind.patch_of(game, action)
        cells = game.action_cells(action) if patch is not None else []
        return MoveRecord(int(game.to_move), int(action), kind.notation(action),
                          kind.describe(game, action), cells, patch, by_agent)

    def play_human(self, action: int) -> MoveRecord:
        """Play the person's ``action``; :class:`Conflict` when it is not their turn,
        :class:`IllegalMove` (saying why) when the rules forbid it."""
        with self.lock:
            if self.game.is_over:
                raise Conflict("the game is over: start a new game or undo your last move")
            if self.game.to_move != self.seat:
                raise Conflict("it is the agent's turn")
            if action not in set(self.game.legal_actions().tolist()):
                raise IllegalMove(self.kind.why_illegal(self.game, action))
            record = self._record(action, by_agent=False)
            self.undo_points.append((self.game.copy(), len(self.moves)))
            self.game.step(action)
            self.moves.append(record)
            return record

    def play_agent(self) -> MoveRecord:
        """Let the agent play one move; this takes the agent's thinking time, so call it
        off the event loop. :class:`Conflict` when it is not the agent's turn or it is
        already thinking."""
        with self.lock:
            if self.thinking:
                raise Conflict("the agent is already thinking about its move")
            if not self.agent_to_move:
                raise Conflict("it is not the agent's turn")
            self.thinking = True
            position = self.game.copy()
        try:
            action = int(self.agent.act_game(position))
        finally:
            with self.lock:
                self.thinking = False
        with self.lock:
            record = self._record(action, by_agent=True)
            self.game.step(action)
            self.moves.append(record)
            return record

    def undo(self) -> None:
        """Go back to the position before the person's last move (the agent's replies
        since go too); :class:`Conflict` while the agent thinks or before the person has
        moved."""
        with self.lock:
            if self.thinking:
                raise Conflict("the agent is thinking: undo once it has moved")
            if not self.undo_points:
                raise Conflict("there is no move of yours to undo")
            game, n_moves = self.undo_points.pop()
            self.game = game
            del self.moves[n_moves:]


class Store:
    """The sessions a server holds, at most ``max_games``, by id."""

    def __init__(self, factory: AgentFactory, max_games: int = 32) -> None:
        if max_games < 1:
            raise ValueError(f"max_games must be at least 1, got {max_games}")
        self.factory = factory
        self.max_games = max_games
        self._sessions: dict[str, Session] = {}
        self._guard = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    def create(self, kind: Kind, seed: int, seat: int, spec: str, rules: str) -> Session:
        """A new session of ``kind``'s game (its agent built by the factory, which may
        take a while: call this off the event loop), making room by dropping the longest
        idle game."""
        agent = self.factory(spec, seed, kind.name)
        game = kind.new(seed, rules)
        session = Session(secrets.token_urlsafe(12), game, kind, agent, seat, seed, rules,
                          spec)
        with self._guard:
            while len(self._sessions) >= self.max_games:
                idle = [s for s in self._sessions.values() if not s.thinking]
                if not idle:
                    raise Full(f"all {self.max_games} games are busy: try again shortly")
                del self._sessions[min(idle, key=lambda s: s.touched).id]
            self._sessions[session.id] = session
        return session

    def get(self, game_id: str) -> Session:
        """The session ``game_id``; :class:`NotFound` if none."""
        session = self._sessions.get(game_id)
        if session is None:
            raise NotFound(f"no game {game_id!r} here (finished games are dropped when the "
                           "server needs room): start a new game")
        session.touched = time.monotonic()
        return session
