"""The Gymnasium environment: the agent holds one seat of a game, an opponent the other.

The documentation page is :class:`PatchworkEnv`'s docstring. The opponent's moves are
played by a :class:`~patchwork_env.envs.duel.Duel` of one game, the same code under the vector
environments, so the same seeds and actions give the same games everywhere.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from patchwork_env.data.rules import Rules
from patchwork_env.data.validation import check_action, check_options, check_render_mode, check_seed
from patchwork_env.envs.duel import Duel
from patchwork_env.envs.game_kinds import PATCHWORK, GameKind
from patchwork_env.envs.render_modes import render_game
from patchwork_env.views.game import Game


class PatchworkEnv(gym.Env):
    """Patchwork against an opponent: the agent holds one seat, the opponent the other.

    ## Description
    The environment plays the opponent's moves inside :meth:`step`, so every observation
    is one where the agent is to move (or the final position). The agent's seat is drawn
    at random for every episode unless ``learner_seat`` fixes it; the starting player
    comes from the setup, so the agent may find the opponent's opening moves made.

    ## Action Space
    ``Discrete(2026)``, the project's action encoding (see :mod:`patchwork_env.data.actions`).
    :meth:`action_masks` (and ``info["action_mask"]``, int8) give the legal actions.

    ## Observation Space
    ``Box(0, high, (1189,), float32)``: the ego-centric vector of
    :mod:`patchwork_env.views.observation` (the agent's quilt and figures first).

    ## Rewards
    0 until the end; then +1 for a win and -1 for a loss (``reward="win"``), or
    ``score_scale * (own score - opponent's score)`` with ``reward="score"``. An illegal
    action ends the episode with ``illegal_reward`` (default -1) and
    ``info["illegal_action"] = True``.

    ## Episode End
    Terminated when the game ends or after an illegal action; never truncated.

    ## Info
    Every key is present after every ``reset`` and ``step``, with one type:
    ``action_mask`` (``(2026,) int8``), ``learner_seat`` (int), ``winner`` (the winning
    seat once the game is over, -1 before and after an illegal action), ``scores`` (the
    current scores of seat 0 and seat 1, final at the end), ``is_success`` and
    ``illegal_action`` (bools).

    ## Arguments
    ``opponent``: ``"random"``, an :class:`~patchwork_env.envs.opponents.Opponent`, an agent
    with ``act(batch, rows)`` (e.g. ``patchwork_env.agents.make("greedy", seed=0)``) or a
    policy ``(observations, masks) -> actions``; ``learner_seat``: 0, 1 or None
    (random); ``rules``: preset name or :class:`~patchwork_env.Rules`; ``reward``,
    ``score_scale``, ``illegal_reward``: as above; ``render_mode``: ``"ansi"``,
    ``"human"`` or ``"rgb_array"``.

    ``reset(seed=s)`` sets the game up exactly as ``Game.new(seed=s)`` and the AEC
    environment's ``reset(seed=s)``; ``options`` may give ``circle``, ``first_player``
    and ``learner_seat``.

    ## Errors
    A bad argument changes nothing and raises an error that names it: an action or a
    seed that is not an integer (a float, a bool, a string, an array of several),
    ``TypeError``; an action outside ``0..2025`` or a negative seed, ``ValueError``;
    ``options`` as :func:`~patchwork_env.data.validation.check_options` reads them. An
    integer numpy value is taken like the int.

    ## Version History
    * v0 (patchwork-env 0.1.0): the environment as documented here; opponents are
      objects (the env looks up no names: ``patchwork_env.agents.make_opponent("greedy")``),
      a failing opponent leaves the env as it was before the step, and ``info`` has the same
      keys and types at every step.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "render_fps": 1,
    }
    RESET_OPTIONS = ("circle", "first_player", "learner_seat")
    kind: ClassVar[GameKind] = PATCHWORK
    """The game played (:mod:`.game_kinds`)."""

    def __init__(self, opponent: Any = "random", learner_seat: int | None = None,
                 rules: str | Rules = "default", reward: str = "win", score_scale: float = 0.02,
                 illegal_reward: float = -1.0, render_mode: str | None = None) -> None:
        check_render_mode(render_mode, self.metadata["render_modes"])
        kind = self.kind
        self.rules = kind.get_rules(rules)
        self.render_mode = render_mode
        self.observation_space = kind.layout(self.rules).space
        self.action_space = gym.spaces.Discrete(kind.n_actions)
        self._duel = Duel(kind.batch_type.new(1, seed=0, rules=self.rules), opponent, None,
                          learner_seat, reward, score_scale, illegal_reward)
        self._over = True

    @property
    def learner_seat(self) -> int:
        """The agent's seat (0 or 1) in the current episode."""
        return int(self._duel.seats[0])

    @property
    def game(self) -> Game:
        """A copy of the current position as a :class:`~patchwork_env.Game` (a
        ``DraftGame`` in the draft)."""
        return self.kind.game_type.from_batch(self._duel.batch, 0)

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        opts = check_options(options, self.RESET_OPTIONS)
        seed = check_seed(seed)  # as Game.new reads it, before Gymnasium's narrower check
        super().reset(seed=seed)
        self._duel.reseed(self.np_random, seed)
        given = {key: None if opts.get(key) is None else [opts[key]] for key in opts}
        # Seeded, the setup is drawn first, exactly as Game.new(seed) draws it.
        self._duel.start(np.zeros(1, np.int64), given.get(self.kind.setup_option),
                         given.get("first_player"), given.get("learner_seat"))
        self._over = bool(self._duel.batch.done[0])
        if self.render_mode == "human":
            self.render()
        return self._duel.observe()[0], self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._over:
            raise RuntimeError("the episode is over: call reset() before step()")
        acts = np.array([check_action(action, self.kind.n_actions)], np.int64)
        rewards, over, illegal = self._duel.step(acts)
        self._over = bool(over[0])
        info = self._info()
        if self._over:
            info.update(self._duel.outcomes(np.zeros(1, np.int64), illegal)[0])
        if self.render_mode == "human":
            self.render()
        return self._duel.observe()[0], float(rewards[0]), self._over, False, info

    def action_masks(self) -> np.ndarray:
        """``(n_actions,) bool``: the agent's legal actions (for sb3-contrib's MaskablePPO)."""
        return self._duel.masks[0].copy()

    def _info(self) -> dict[str, Any]:
        duel = self._duel
        return {"action_mask": duel.masks[0].astype(np.int8),
                "learner_seat": int(duel.seats[0]), "winner": -1,
                "scores": tuple(duel.batch.scores()[0].tolist()), "is_success": False,
                "illegal_action": False}

    def render(self) -> str | np.ndarray | None:
        return render_game(self.game, self.render_mode)
