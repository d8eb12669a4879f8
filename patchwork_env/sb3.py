"""A Stable-Baselines3 ``VecEnv`` that runs all its games in one :class:`GameBatch`.

``PatchworkVecEnv(n_envs, opponent, seed)`` gives SB3 ``n_envs`` games at once with no
per-game Python: the learner's moves, the opponent's replies (batched over every game
waiting for it), observations, masks and resets are each one call over the batch. It is
the batched twin of :class:`~patchwork_env.gym_env.PatchworkEnv` (same :class:`Duel`
underneath), so the same seeds and actions give the same games.

Example::

    from sb3_contrib import MaskablePPO

    venv = PatchworkVecEnv(64, opponent="random", seed=0)
    model = MaskablePPO("MlpPolicy", venv, seed=0).learn(100_000)
    model.save("generation_1")
    venv.set_opponent(model_policy(MaskablePPO.load("generation_1")))  # a frozen copy
    model.learn(100_000)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

from .actions import N_ACTIONS
from .engine import GameBatch, random_setup
from .gym_env import Duel, Policy, check_action_values, read_setup
from .observation import layout
from .rules import Rules, get_rules


class PatchworkVecEnv(VecEnv):
    """``n_envs`` games of Patchwork against an opponent, as one SB3 ``VecEnv``.

    Each game works as :class:`~patchwork_env.gym_env.PatchworkEnv` (observations,
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

    def __init__(self, n_envs: int, opponent: str | Policy | Any = "random",
                 seed: int | None = None, learner_seat: int | None = None,
                 rules: str | Rules = "default", reward: str = "win",
                 score_scale: float = 0.02, illegal_reward: float = -1.0,
                 render_mode: str | None = None) -> None:
        if not isinstance(n_envs, int | np.integer) or isinstance(n_envs, bool) or n_envs < 1:
            raise ValueError(f"n_envs must be a positive int, got {n_envs!r}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.rules = get_rules(rules)
        self.render_mode = render_mode
        self.duel = Duel(GameBatch.new(int(n_envs), rules=self.rules, seed=seed), opponent,
                         seed, learner_seat, reward, score_scale, illegal_reward)
        """The games and the learner's seats; ``duel.batch`` is the :class:`GameBatch`."""
        super().__init__(int(n_envs), layout(self.rules).space, spaces.Discrete(N_ACTIONS))
        if seed is not None:
            self.seed(seed)
        self._actions: np.ndarray | None = None
        self._started = False

    @property
    def batch(self) -> GameBatch:
        """The games, one row per environment."""
        return self.duel.batch

    @property
    def learner_seats(self) -> np.ndarray:
        """``(n_envs,)``: the learner's seat in each current game."""
        return self.duel.seats.copy()

    def set_opponent(self, opponent: str | Policy | Any) -> None:
        """Play the learner against ``opponent`` from the next move on."""
        self.duel.set_opponent(opponent)

    # ----- the VecEnv cycle -------------------------------------------------------------
    def reset(self) -> VecEnvObs:
        seeds, options = self._seeds, self._options
        rows = np.arange(self.num_envs)
        if all(s is None for s in seeds) and not any(options):
            self.duel.start(rows)
        else:
            self._start_seeded(rows, seeds, options)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in rows]
        self._started = True
        return self.duel.observe()

    def _start_seeded(self, rows: np.ndarray, seeds: Sequence[int | None],
                      options: Sequence[dict[str, Any]]) -> None:
        """Games set up from per-env seeds (``Game.new(seed)``) and options."""
        if all(s is not None for s in seeds):
            self.duel.reseed(np.random.default_rng(list(seeds)), seeds[0])
        opts = [read_setup(o, self.RESET_OPTIONS) for o in options]
        circles, firsts = [], []
        for seed, opt in zip(seeds, opts, strict=True):
            circle, first = random_setup(np.random.default_rng(seed) if seed is not None
                                         else self.duel.rng)
            circles.append(opt["circle"] if opt.get("circle") is not None else circle)
            firsts.append(opt["first_player"] if opt.get("first_player") is not None else first)
        self.duel.start(rows, np.array(circles), np.array(firsts))

    def step_async(self, actions: np.ndarray) -> None:
        if not self._started:
            raise RuntimeError("call reset() before step()")
        self._actions = check_action_values(actions, self.num_envs)

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("step_wait() needs step_async(actions) first")
        actions, self._actions = self._actions, None
        rewards, over, illegal = self.duel.step(actions)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if over.any():
            rows = np.flatnonzero(over)
            final_obs = self.duel.observe(rows)
            for k, (row, outcome) in enumerate(
                    zip(rows.tolist(), self.duel.outcomes(rows, illegal[rows]), strict=True)):
                outcome["terminal_observation"] = final_obs[k]
                infos[row] = outcome
            self.duel.start(rows)
        return self.duel.observe(), rewards.astype(np.float32), over, infos

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
            from .render import render_rgb

            return [render_rgb(self.batch.game(i)) for i in idx]
        raise AttributeError(f"PatchworkVecEnv has no per-env method {method_name!r}; "
                             "available: 'action_masks', 'render'")

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        from .render import render_rgb

        return [render_rgb(self.batch.game(i)) for i in range(self.num_envs)]


def model_policy(model: Any, deterministic: bool = False) -> Policy:
    """A policy ``(observations, masks) -> actions`` that asks ``model`` (e.g. MaskablePPO).

    Pass a frozen copy of the learner (say ``MaskablePPO.load(path)``) to play against
    an earlier self.
    """

    def policy(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions, _ = model.predict(obs, action_masks=masks, deterministic=deterministic)
        return np.asarray(actions)

    policy.__name__ = f"{type(model).__name__}.predict"
    return policy
