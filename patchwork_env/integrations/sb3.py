"""A Stable-Baselines3 ``VecEnv`` over the native vector env: all games in one ``GameBatch``.

``PatchworkVecEnv(n_envs, opponent, seed)`` gives SB3 ``n_envs`` games at once with no
per-game Python. It is a thin adapter over
:class:`~patchwork_env.envs.vector_env.PatchworkVectorEnv` (same-step autoreset), which does
the work: the learner's moves, the opponent's replies, observations, masks and restarts.
So the Gymnasium env, the Gymnasium vector env and this one play the same games for the
same seeds and actions.

Example::

    from sb3_contrib import MaskablePPO
    from patchwork_env.agents import PolicyAgent

    venv = PatchworkVecEnv(64, opponent="random", seed=0)
    model = MaskablePPO("MlpPolicy", venv, seed=0).learn(100_000)
    venv.set_opponent(PolicyAgent.from_model(model))  # a frozen copy of the learner
    model.learn(100_000)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

from patchwork_env.data.rules import Rules
from patchwork_env.data.validation import (
    check_actions,
    check_count,
    check_render_mode,
    check_seed,
)
from patchwork_env.engine.batch import GameBatch
from patchwork_env.envs.duel import Duel
from patchwork_env.envs.vector_env import SAME_STEP, PatchworkVectorEnv
from patchwork_env.views.game import Game
from patchwork_env.views.render import render_rgb


class PatchworkVecEnv(VecEnv):
    """``n_envs`` games of Patchwork against an opponent, as one SB3 ``VecEnv``.

    Each game works as :class:`~patchwork_env.envs.gym_env.PatchworkEnv` (observations,
    rewards, seats, illegal actions, ``info`` at the end): the learner's seat is drawn
    for every episode unless ``learner_seat`` fixes it, the opponent's moves are played
    inside :meth:`step_wait`, rewards are the learner's, and a finished game restarts at
    once with ``terminal_observation`` in its ``info``. :meth:`action_masks` describes the
    games as they stand after those restarts.

    Seeding follows SB3: with ``seed`` (or after ``seed(s)``) the next :meth:`reset` sets
    game ``i`` up as ``Game.new(seed=s + i)``; later games draw from the env's generator.
    ``opponent``: ``"random"``, an ``agents`` registry name, an agent or a policy
    ``(observations, masks) -> actions``; :meth:`set_opponent` swaps it between steps.
    """

    RESET_OPTIONS = ("circle", "first_player")

    def __init__(self, n_envs: int, opponent: Any = "random",
                 seed: int | None = None, learner_seat: int | None = None,
                 rules: str | Rules = "default", reward: str = "win",
                 score_scale: float = 0.02, illegal_reward: float = -1.0,
                 render_mode: str | None = None) -> None:
        n = check_count(n_envs, "n_envs")
        check_render_mode(render_mode, ["rgb_array"])
        self.vector_env = PatchworkVectorEnv(n, opponent, seed, learner_seat, rules, reward,
                                             score_scale, illegal_reward, render_mode,
                                             autoreset_mode=SAME_STEP)
        """The Gymnasium vector env that plays the games."""
        self.rules = self.vector_env.rules
        self.render_mode = render_mode
        super().__init__(n, self.vector_env.single_observation_space,
                         self.vector_env.single_action_space)
        if seed is not None:
            self.seed(seed)
        self._actions: np.ndarray | None = None
        self._started = False

    @property
    def duel(self) -> Duel:
        """The games and the learner's seats; ``duel.batch`` is the :class:`GameBatch`."""
        return self.vector_env.duel

    @property
    def batch(self) -> GameBatch:
        """The games, one row per environment."""
        return self.duel.batch

    @property
    def learner_seats(self) -> np.ndarray:
        """``(n_envs,)``: the learner's seat in each current game."""
        return self.duel.seats.copy()

    def set_opponent(self, opponent: Any) -> None:
        """Play the learner against ``opponent`` from the next move on."""
        self.duel.set_opponent(opponent)

    # ----- the VecEnv cycle -------------------------------------------------------------
    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """SB3's ``seed``: the next :meth:`reset` starts game ``i`` from ``seed + i`` (a
        random ``seed`` if ``None``); ``seed`` is read as ``Game.new`` reads it."""
        return super().seed(check_seed(seed))

    def reset(self) -> VecEnvObs:
        self.vector_env.start_games(self._seeds, self._options)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._started = True
        return self.duel.observe()

    def step_async(self, actions: np.ndarray) -> None:
        if not self._started:
            raise RuntimeError("call reset() before step()")
        self._actions = check_actions(actions, self.num_envs)

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("step_wait() needs step_async(actions) first")
        actions, self._actions = self._actions, None
        rewards, over, _ = self.vector_env.advance_checked(actions)  # checked in step_async
        obs = self.duel.observe()
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if over.any():
            ended = self.duel.ended
            for k, (row, outcome) in enumerate(
                    zip(ended.rows.tolist(), ended.outcomes, strict=True)):
                infos[row] = {**outcome, "terminal_observation": ended.observations[k]}
        return obs, rewards.astype(np.float32), over, infos

    def action_masks(self) -> np.ndarray:
        """``(n_envs, 2026) bool``: the learner's legal actions in every game."""
        return self.duel.masks.copy()

    def close(self) -> None:
        """Nothing to release."""

    # ----- the per-environment interface of VecEnv ----------------------------------------
    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """An attribute of the vector env, once per index (the envs share one object)."""
        value = getattr(self, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute shared by all envs (per-env values are not supported)."""
        if indices is not None and list(self._get_indices(indices)) != list(range(self.num_envs)):
            raise ValueError("the envs of a PatchworkVecEnv share their attributes: "
                             "set_attr applies to all of them at once")
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        """Per-env results; ``action_masks`` gives each env's row of :meth:`action_masks`."""
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.duel.masks
            return [masks[i].copy() for i in idx]
        if method_name == "render":
            return [render_rgb(Game.from_batch(self.batch, i)) for i in idx]
        raise AttributeError(f"PatchworkVecEnv has no per-env method {method_name!r}; "
                             "available: 'action_masks', 'render'")

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [render_rgb(Game.from_batch(self.batch, i)) for i in range(self.num_envs)]
