"""A Gymnasium view of Patchwork: the agent holds one seat, an opponent plays the other.

The building blocks here are shared with :mod:`patchwork_env.sb3`:

* an :class:`Opponent` plays the seat the learner does not hold, in whole batches: the
  built-in ``"random"`` player (compiled, uniform over the legal moves), any policy
  ``(observations, masks) -> actions`` over batches (a frozen copy of the learner, say),
  or an agent of the ``agents`` package (``act(batch, rows)``), found by name there;
* a :class:`Duel` is a :class:`~patchwork_env.GameBatch` in which the learner holds one
  seat of every game: it sets games up, lets the opponent reply and pays the learner at
  the end. :class:`PatchworkEnv` is a duel of one game; ``PatchworkVecEnv`` one of many.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from numba import njit

from .actions import N_ACTIONS
from .engine import GameBatch, check_circle, random_setups
from .game import Game
from .kernels import apply_action, random_legal_action, row_seed
from .observation import check_reward, final_rewards, layout, observe
from .rules import Rules, get_rules

Policy = Callable[[np.ndarray, np.ndarray], Any]
"""``policy(observations (k, D) float32, masks (k, 2026) bool) -> (k,) actions``."""


# ---------------------------------------------------------------------------------------
# opponents


class Opponent(ABC):
    """Plays the seat the learner does not hold."""

    name: str = "opponent"

    @abstractmethod
    def act(self, batch: GameBatch, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``(len(rows),)`` legal actions for the player to move in games ``rows``."""

    def reply(self, batch: GameBatch, seats: np.ndarray, rng: np.random.Generator) -> None:
        """Move in every unfinished game until the learner (``seats``) is to move again."""
        while True:
            to_move = batch.to_move
            rows = np.flatnonzero((to_move >= 0) & (to_move != seats))
            if not len(rows):
                return
            actions = np.full(len(batch), -1, np.int64)
            actions[rows] = self.act(batch, rows, rng)
            try:
                batch.step(actions)
            except ValueError as e:
                raise ValueError(f"opponent {self.name} played an illegal move: {e}") from None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


@njit(cache=True)
def _random_replies(state, seats, seed, income_before, leather_spaces, bonus_masks, track_end):
    for i in range(state.shape[0]):
        s = state[i]
        rng = row_seed(seed, i)
        while s.to_move >= 0 and s.to_move != seats[i]:
            rng, a = random_legal_action(s, rng)
            apply_action(s, a, income_before, leather_spaces, bonus_masks, track_end)


class RandomOpponent(Opponent):
    """Uniform over the legal moves, drawn by the engine's compiled sampler."""

    name = "random"

    def act(self, batch: GameBatch, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return batch.random_actions(rng)[rows]

    def reply(self, batch: GameBatch, seats: np.ndarray, rng: np.random.Generator) -> None:
        # One compiled call plays every run of opponent moves in the batch.
        t = batch.tables
        seed = rng.integers(0, 2**64, dtype=np.uint64)
        _random_replies(batch.state, seats, seed, t.income_before, t.leather_spaces,
                        t.bonus_masks, t.track_end)


class PolicyOpponent(Opponent):
    """A policy over observation and mask batches, e.g. a frozen copy of the learner."""

    def __init__(self, policy: Policy, name: str | None = None) -> None:
        self.policy = policy
        self.name = name or getattr(policy, "__name__", type(policy).__name__)

    def act(self, batch: GameBatch, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        seats = batch.to_move[rows]
        obs = observe(batch.state[rows], batch.rules, seats)
        masks = batch.legal_mask()[rows]
        actions = np.asarray(self.policy(obs, masks))
        return _check_actions(actions, len(rows), f"opponent {self.name}")


class AgentOpponent(Opponent):
    """An agent with ``act(batch, rows) -> actions`` (the ``agents`` package interface)."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name = getattr(agent, "spec", None) or type(agent).__name__

    def act(self, batch: GameBatch, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        actions = np.asarray(self.agent.act(batch, rows))
        return _check_actions(actions, len(rows), f"opponent {self.name}")


def make_opponent(spec: str | Policy | Any, seed: int | None = None) -> Opponent:
    """An :class:`Opponent` from a name, a policy callable, an agent or an opponent.

    ``"random"`` is built in. Any other name is looked up in the ``agents`` package's
    registry (``agents.make``), built with ``seed``.
    """
    if isinstance(spec, Opponent):
        return spec
    if isinstance(spec, str):
        return RandomOpponent() if spec == "random" else AgentOpponent(_agent_by_name(spec, seed))
    if hasattr(spec, "act"):
        return AgentOpponent(spec)
    if callable(spec):
        return PolicyOpponent(spec)
    raise TypeError("opponent must be a name, a policy (observations, masks) -> actions, or "
                    f"an agent with act(batch, rows); got {type(spec).__name__}")


def _agent_by_name(spec: str, seed: int | None) -> Any:
    try:
        import agents
    except ImportError:
        raise ValueError(f"unknown opponent {spec!r}: 'random' is the only built-in opponent "
                         "and the agents package is not installed") from None
    make = getattr(agents, "make", None)
    if make is None:
        raise ValueError(f"unknown opponent {spec!r}: 'random' is the only built-in opponent "
                         "and the agents package has no registry (agents.make)")
    try:
        return make(spec, seed=seed)
    except (KeyError, ValueError) as e:
        raise ValueError(f"opponent {spec!r}: {e}") from e


def _check_actions(actions: np.ndarray, n: int, who: str) -> np.ndarray:
    if actions.shape != (n,) or actions.dtype.kind not in "iu":
        raise ValueError(f"{who} must return {n} integer actions, got {actions.dtype} "
                         f"array of shape {actions.shape}")
    return actions.astype(np.int64, copy=False)


# ---------------------------------------------------------------------------------------
# the learner's games


class Duel:
    """Games in which the learner holds one seat and an :class:`Opponent` the other.

    ``learner_seat`` fixes the learner's seat; ``None`` draws it at random for every game.
    After :meth:`start` and :meth:`step` the learner is to move in every unfinished game,
    and :attr:`masks` gives its legal actions.
    """

    def __init__(self, batch: GameBatch, opponent: str | Policy | Any, seed: int | None = None,
                 learner_seat: int | None = None, reward: str = "win",
                 score_scale: float = 0.02, illegal_reward: float = -1.0) -> None:
        if learner_seat not in (None, 0, 1) or isinstance(learner_seat, bool):
            raise ValueError(f"learner_seat must be 0, 1 or None (random), got {learner_seat!r}")
        check_reward(reward, score_scale)
        self.batch = batch
        self.set_opponent(opponent, seed)
        self.rng = np.random.default_rng(seed)
        """Draws setups, seats and the random opponent's moves."""
        self.learner_seat = learner_seat
        self.reward = reward
        self.score_scale = float(score_scale)
        self.illegal_reward = float(illegal_reward)
        self.seats = np.zeros(len(batch), np.int8)
        """The learner's seat in each game."""
        self._masks = np.zeros((len(batch), N_ACTIONS), np.bool_)
        self._masks_stale = True
        self._scores = np.zeros((len(batch), 2), np.int64)
        self._winners = np.full(len(batch), -1, np.int64)

    def set_opponent(self, opponent: str | Policy | Any, seed: int | None = None) -> None:
        """Let ``opponent`` (see :func:`make_opponent`) play from the next move on."""
        self.opponent = make_opponent(opponent, seed)
        self._opponent_spec = opponent

    def reseed(self, rng: np.random.Generator, seed: int | None) -> None:
        """Draw from ``rng`` from now on; given a ``seed``, an opponent named by spec is
        rebuilt with it so that its own choices repeat too."""
        self.rng = rng
        named = isinstance(self._opponent_spec, str) and self._opponent_spec != "random"
        if seed is not None and named:
            self.opponent = make_opponent(self._opponent_spec, seed)

    def start(self, rows: np.ndarray, circles: Any = None, first_players: Any = None,
              seats: Any = None) -> None:
        """New games in ``rows``; circles, first players and learner seats are drawn unless
        given. The opponent makes its opening moves where it starts."""
        if circles is None and first_players is None:
            self.batch.reset(rows, self.rng)  # draws setups as random_setups(rng) does
        else:
            drawn_circles, drawn_first = random_setups(self.rng, len(rows))
            fresh = GameBatch.from_setups(drawn_circles if circles is None else circles,
                                          drawn_first if first_players is None else first_players,
                                          self.batch.rules)
            self.batch.state[rows] = fresh.state
        if seats is None:
            seats = (np.full(len(rows), self.learner_seat) if self.learner_seat is not None
                     else self.rng.integers(0, 2, size=len(rows)))
        self.seats[rows] = seats
        self.opponent.reply(self.batch, self.seats, self.rng)
        self._masks_stale = True

    @property
    def masks(self) -> np.ndarray:
        """``(N, 2026) bool``: the learner's legal actions (none where a game is over)."""
        if self._masks_stale:  # computed once per position, when first asked for
            self.batch.legal_mask(out=self._masks)
            self._masks_stale = False
        return self._masks

    def observe(self, rows: np.ndarray | None = None) -> np.ndarray:
        """``(k, D) float32``: the games ``rows`` (all by default) seen by the learner."""
        if rows is None:
            return self.batch.observe(self.seats)
        return observe(self.batch.state[rows], self.batch.rules, self.seats[rows])

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Play the learner's ``actions`` (ints in range, one per game) and the replies.

        Returns ``(rewards, over, illegal)``: an action outside :attr:`masks` ends its game
        with ``illegal_reward`` and leaves the position as it was; a finished game pays
        its final reward.
        """
        illegal = ~self.masks[np.arange(len(self.batch)), actions]
        self.batch.step(np.where(illegal, -1, actions), check=False)
        self.opponent.reply(self.batch, self.seats, self.rng)
        finished = self.batch.done
        rewards = np.zeros(len(self.batch))
        if finished.any():
            self._scores, self._winners = self.batch.scores(), self.batch.winners()
            rows = np.flatnonzero(finished)
            rewards[rows] = final_rewards(self._scores[rows], self._winners[rows],
                                          self.seats[rows], self.reward, self.score_scale)
        rewards[illegal] = self.illegal_reward
        self._masks_stale = True
        return rewards, finished | illegal, illegal

    def outcomes(self, rows: np.ndarray, illegal: np.ndarray) -> list[dict[str, Any]]:
        """How the games ``rows`` ended (as the last :meth:`step` left them), for ``info``."""
        out = []
        for row, bad in zip(rows.tolist(), illegal.tolist(), strict=True):
            seat = int(self.seats[row])
            if bad:
                out.append({"learner_seat": seat, "illegal_action": True, "is_success": False})
                continue
            winner = int(self._winners[row])
            out.append({"learner_seat": seat, "scores": tuple(self._scores[row].tolist()),
                        "winner": winner, "is_success": winner == seat})
        return out


def check_action_values(actions: Any, n: int) -> np.ndarray:
    """``(n,) int64`` actions; ``ValueError`` naming the problem unless each is in range."""
    acts = np.asarray(actions)
    if acts.shape != (n,) and acts.size == n:
        acts = acts.reshape(n)
    if acts.shape != (n,):
        raise ValueError(f"expected {n} actions, got shape {acts.shape}")
    if acts.dtype.kind not in "iu":
        raise TypeError(f"actions must be integers, got dtype {acts.dtype}")
    bad = (acts < 0) | (acts >= N_ACTIONS)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"action {int(acts[i])} (env {i}) is outside 0..{N_ACTIONS - 1}")
    return acts.astype(np.int64, copy=False)


def read_setup(options: dict[str, Any] | None, allowed: tuple[str, ...]) -> dict[str, Any]:
    """Validated reset options: ``circle``, ``first_player``, ``learner_seat``, ``rules``."""
    options = dict(options or {})
    unknown = set(options) - set(allowed)
    if unknown:
        raise ValueError(f"unknown reset options {sorted(unknown)}; allowed: {list(allowed)}")
    if options.get("circle") is not None:
        options["circle"] = check_circle(options["circle"])
    for key in ("first_player", "learner_seat"):
        value = options.get(key)
        if value is not None and (value not in (0, 1) or isinstance(value, bool)):
            raise ValueError(f"{key} must be 0 or 1, got {value!r}")
    return options


def render_game(game: Game, render_mode: str | None) -> str | np.ndarray | None:
    """What ``render()`` returns in ``render_mode``: ``"ansi"`` text, ``"rgb_array"`` an
    image; ``"human"`` prints the text and returns ``None``."""
    from .render import render_rgb, render_text

    if render_mode is None:
        warnings.warn("render() called without a render_mode; pass render_mode=... to the "
                      "constructor", stacklevel=3)
        return None
    if render_mode == "rgb_array":
        return render_rgb(game)
    text = render_text(game)
    if render_mode == "ansi":
        return text
    print(text)
    return None


def check_render_mode(render_mode: str | None, modes: list[str]) -> None:
    """``ValueError`` unless ``render_mode`` is ``None`` or one of ``modes``."""
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode must be one of {modes} or None, got {render_mode!r}")


# ---------------------------------------------------------------------------------------
# the single-agent environment


class PatchworkEnv(gym.Env):
    """Patchwork against an opponent: the agent holds one seat, the opponent the other.

    ## Description
    The environment plays the opponent's moves inside :meth:`step`, so every observation
    is one where the agent is to move (or the final position). The agent's seat is drawn
    at random for every episode unless ``learner_seat`` fixes it; the starting player
    comes from the setup, so the agent may find the opponent's opening moves made.

    ## Action Space
    ``Discrete(2026)``, the project's action encoding (see :mod:`patchwork_env.actions`).
    :meth:`action_masks` (and ``info["action_mask"]``, int8) give the legal actions.

    ## Observation Space
    ``Box(0, high, (1189,), float32)``: the ego-centric vector of
    :mod:`patchwork_env.observation` (the agent's quilt and figures first).

    ## Rewards
    0 until the end; then +1 for a win and -1 for a loss (``reward="win"``), or
    ``score_scale * (own score - opponent's score)`` with ``reward="score"``. An illegal
    action ends the episode with ``illegal_reward`` (default -1) and
    ``info["illegal_action"] = True``.

    ## Episode End
    Terminated when the game ends or after an illegal action; never truncated. The final
    ``info`` holds ``scores`` (seat 0, seat 1), ``winner`` (a seat), ``learner_seat``
    and ``is_success``.

    ## Arguments
    ``opponent``: ``"random"``, another agent name of the ``agents`` registry, an agent
    or a policy ``(observations, masks) -> actions``; ``learner_seat``: 0, 1 or None
    (random); ``rules``: preset name or :class:`~patchwork_env.Rules`; ``reward``,
    ``score_scale``, ``illegal_reward``: as above; ``render_mode``: ``"ansi"``,
    ``"human"`` or ``"rgb_array"``.

    ``reset(seed=s)`` sets the game up exactly as ``Game.new(seed=s)`` and the AEC
    environment's ``reset(seed=s)``; ``options`` may give ``circle``, ``first_player``
    and ``learner_seat``.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "render_fps": 1,
    }
    RESET_OPTIONS = ("circle", "first_player", "learner_seat")

    def __init__(self, opponent: str | Policy | Any = "random", learner_seat: int | None = None,
                 rules: str | Rules = "default", reward: str = "win", score_scale: float = 0.02,
                 illegal_reward: float = -1.0, render_mode: str | None = None) -> None:
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.rules = get_rules(rules)
        self.render_mode = render_mode
        self.observation_space = layout(self.rules).space
        self.action_space = gym.spaces.Discrete(N_ACTIONS)
        self._duel = Duel(GameBatch.new(1, seed=0, rules=self.rules), opponent, None,
                          learner_seat, reward, score_scale, illegal_reward)
        self._over = True

    @property
    def learner_seat(self) -> int:
        """The agent's seat (0 or 1) in the current episode."""
        return int(self._duel.seats[0])

    @property
    def game(self) -> Game:
        """A copy of the current position as a :class:`~patchwork_env.Game`."""
        return self._duel.batch.game(0)

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        opts = read_setup(options, self.RESET_OPTIONS)
        super().reset(seed=seed)
        self._duel.reseed(self.np_random, seed)
        given = {key: None if opts.get(key) is None else [opts[key]] for key in opts}
        # Seeded, the setup is drawn first, exactly as Game.new(seed) draws it.
        self._duel.start(np.zeros(1, np.int64), given.get("circle"), given.get("first_player"),
                         given.get("learner_seat"))
        self._over = bool(self._duel.batch.done[0])
        if self.render_mode == "human":
            self.render()
        return self._duel.observe()[0], self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._over:
            raise RuntimeError("the episode is over: call reset() before step()")
        acts = check_action_values(np.reshape(action, -1), 1)
        rewards, over, illegal = self._duel.step(acts)
        self._over = bool(over[0])
        info = self._info()
        if self._over:
            info.update(self._duel.outcomes(np.zeros(1, np.int64), illegal)[0])
        if self.render_mode == "human":
            self.render()
        return self._duel.observe()[0], float(rewards[0]), self._over, False, info

    def action_masks(self) -> np.ndarray:
        """``(2026,) bool``: the agent's legal actions (for sb3-contrib's MaskablePPO)."""
        return self._duel.masks[0].copy()

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self._duel.masks[0].astype(np.int8)}

    def render(self) -> str | np.ndarray | None:
        return render_game(self.game, self.render_mode)
