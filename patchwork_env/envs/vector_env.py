"""A native Gymnasium ``VectorEnv``: many games against an opponent in one ``GameBatch``.

``gymnasium.make_vec("patchwork_env/Patchwork-v0", num_envs=64,
vectorization_mode="vector_entry_point")`` builds it; so does
``PatchworkVectorEnv(64, opponent=..., seed=0)``. The documentation page is
:class:`PatchworkVectorEnv`'s docstring.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import batch_space

from patchwork_env.data.rules import Rules
from patchwork_env.data.validation import (
    check_actions,
    check_count,
    check_options,
    check_render_mode,
    check_seed,
)
from patchwork_env.engine.batch import GameBatch
from patchwork_env.envs.duel import Duel
from patchwork_env.envs.game_kinds import PATCHWORK, GameKind

try:  # Gymnasium 1.1 and newer name the autoreset modes
    from gymnasium.vector import AutoresetMode

    NEXT_STEP, SAME_STEP = AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP
except ImportError:  # Gymnasium 1.0 resets on the next step only
    AutoresetMode = None
    NEXT_STEP, SAME_STEP = "NextStep", "SameStep"



class PatchworkVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` games of Patchwork against an opponent, stepped together.

    Each game works as :class:`~patchwork_env.envs.gym_env.PatchworkEnv` does (observations,
    actions, rewards, the learner's seat drawn for each episode unless ``learner_seat``
    fixes it, the opponent's moves played inside :meth:`step`), but all games move in one
    compiled call per operation, with no Python per game.

    ## Spaces
    ``single_observation_space``: the ``Box`` of :mod:`patchwork_env.views.observation`;
    ``single_action_space``: ``Discrete(2026)``; the batched spaces stack them.

    ## Infos
    Every key is present after every ``reset`` and ``step``, with one type:
    ``action_mask`` ``(n, 2026) int8`` (the legal actions of the game as returned),
    ``learner_seat`` ``(n,) int64``, ``winner`` ``(n,) int64`` (the winning seat of a game
    that ended on this step, -1 otherwise), ``scores`` ``(n, 2) int64`` (each game's
    current scores, final where it ended), ``is_success`` and ``illegal_action``
    ``(n,) bool``.

    ## Autoreset
    ``autoreset_mode="next_step"`` (Gymnasium's default): the step after a game ends
    restarts it, ignoring that game's action and returning reward 0. ``"same_step"``: a
    game that ends restarts at once; its final observation is in ``infos["final_obs"]``
    and its final infos in ``infos["final_info"]``.

    ## Seeding
    ``reset(seed=s)`` sets game ``i`` up as ``Game.new(seed=s + i)`` (a list gives each
    game its own seed); later games draw from the env's generator. ``options`` may give a
    ``circle`` and ``first_player`` for every game. Each seed is read as ``Game.new``
    reads it: one that is not an int (a bool, a float, a 0-d array) raises ``TypeError``,
    a negative one ``ValueError``, naming it, and the games stay as they were.

    ## Version History
    * v0: the native vector env of ``patchwork_env/Patchwork-v0`` (patchwork-env 0.1.0),
      also under the SB3 ``PatchworkVecEnv``.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"],
                                          "autoreset_mode": NEXT_STEP}
    kind: ClassVar[GameKind] = PATCHWORK
    """The game played (:mod:`.game_kinds`)."""

    def __init__(self, num_envs: int, opponent: Any = "random", seed: int | None = None,
                 learner_seat: int | None = None, rules: str | Rules = "default",
                 reward: str = "win", score_scale: float = 0.02, illegal_reward: float = -1.0,
                 render_mode: str | None = None, autoreset_mode: Any = NEXT_STEP) -> None:
        n = check_count(num_envs, "num_envs")
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        kind = self.kind
        self.rules = kind.get_rules(rules)
        self.render_mode = render_mode
        self.num_envs = n
        self.duel = Duel(kind.batch_type.new(n, rules=self.rules, seed=seed), opponent, seed,
                         learner_seat, reward, score_scale, illegal_reward)
        """The games and the learner's seats; ``duel.batch`` is the :class:`GameBatch` (a
        ``DraftBatch`` in the draft)."""
        self.single_observation_space = kind.layout(self.rules).space
        self.single_action_space = gym.spaces.Discrete(kind.n_actions)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self._restart = np.zeros(n, np.bool_)
        self._started = False

    @property
    def batch(self) -> GameBatch:
        """The games, one row per environment."""
        return self.duel.batch

    def set_opponent(self, opponent: Any) -> None:
        """Play the learner against ``opponent`` from the next move on."""
        self.duel.set_opponent(opponent)

    # ----- reset ------------------------------------------------------------------------
    def reset(self, *, seed: int | Sequence[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        n = self.num_envs
        if seed is None:
            seeds: list[int | None] = [None] * n
        elif isinstance(seed, int | np.integer) and not isinstance(seed, bool):
            seeds = [check_seed(seed) + i for i in range(n)]
        else:
            if isinstance(seed, str | bytes) or not isinstance(seed, Sequence | np.ndarray) \
                    or (isinstance(seed, np.ndarray) and seed.ndim != 1):
                raise TypeError("seed must be an int, one seed per env or None, got "
                                f"{type(seed).__name__} {seed!r}")
            seeds = [check_seed(s, f"seed of env {i}") for i, s in enumerate(seed)]
            if len(seeds) != n:
                raise ValueError(f"reset needs one seed per env ({n}), got {len(seeds)}")
        self.start_games(seeds, [options] * n)
        return self.duel.observe(), self._infos()

    def start_games(self, seeds: Sequence[int | None], options: Sequence[Any]) -> None:
        """Start every game anew: game ``i`` from ``seeds[i]`` (``Game.new(seed)``'s setup)
        or the env's generator, with ``options[i]`` (``circle``, or ``deck`` in the draft,
        and ``first_player``)."""
        kind = self.kind
        opts = [check_options(o, (kind.setup_option, "first_player")) for o in options]
        rows = np.arange(self.num_envs)
        if all(s is None for s in seeds) and not any(opts):
            self.duel.start(rows)
        else:
            if all(s is not None for s in seeds):
                self.duel.reseed(np.random.default_rng(list(seeds)), seeds[0])
            circles, firsts = [], []
            for s, opt in zip(seeds, opts, strict=True):
                circle, first = kind.random_setup(np.random.default_rng(s) if s is not None
                                                  else self.duel.rng,
                                                  opt.get(kind.setup_option),
                                                  opt.get("first_player"))
                circles.append(circle)
                firsts.append(first)
            self.duel.start(rows, np.array(circles), np.array(firsts))
        self._restart[:] = False
        self._started = True

    # ----- step -------------------------------------------------------------------------
    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        rewards, over, illegal = self.advance(actions)
        duel = self.duel
        same_step = self.autoreset_mode == SAME_STEP
        infos = self._infos()
        if over.any():
            ended = duel.ended if same_step else None
            rows = ended.rows if ended is not None else np.flatnonzero(over)
            outcomes = ended.outcomes if ended is not None else duel.outcomes(rows, illegal[rows])
            # Same-step autoreset: the games have restarted, so their ending goes to
            # final_info; next-step: the games stand at their end until the next step.
            ending = {key: infos[key].copy() for key in _ENDING_KEYS} if same_step else infos
            for row, outcome in zip(rows.tolist(), outcomes, strict=True):
                ending["learner_seat"][row] = outcome["learner_seat"]
                ending["illegal_action"][row] = outcome.get("illegal_action", False)
                ending["is_success"][row] = outcome["is_success"]
                if "winner" in outcome:
                    ending["winner"][row] = outcome["winner"]
                    ending["scores"][row] = outcome["scores"]
            if ended is not None:
                infos["final_obs"] = np.zeros((self.num_envs, *self.single_observation_space
                                               .shape), np.float32)
                infos["final_obs"][rows] = ended.observations
                infos["_final_obs"] = over.copy()
                infos["final_info"] = ending
                infos["_final_info"] = over.copy()
        no_truncation = np.zeros(self.num_envs, np.bool_)
        return duel.observe(), rewards, over, no_truncation, infos

    def advance(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The games' part of :meth:`step`, without building the infos (the SB3 adapter
        builds its own): ``(rewards, over, illegal)`` as :meth:`Duel.step` returns them."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        return self.advance_checked(check_actions(actions, self.num_envs, self.kind.n_actions))

    def advance_checked(self, acts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`advance` for actions already checked (``(n,) int64`` in range)."""
        duel = self.duel
        if self.autoreset_mode == SAME_STEP:
            return duel.step(acts, restart=True)
        with duel.transaction(checked=True):
            restart = np.flatnonzero(self._restart)
            if len(restart):  # next-step autoreset: these games start over, their move unused
                duel.start(restart)
                acts = acts.copy()
                acts[restart] = -1
            rewards, over, illegal = duel.step(acts)
        self._restart = over.copy()
        return rewards, over, illegal

    def _infos(self) -> dict[str, Any]:
        n = self.num_envs
        return {"action_mask": self.duel.masks.astype(np.int8),
                "learner_seat": self.duel.seats.astype(np.int64),
                "winner": np.full(n, -1, np.int64),
                "scores": self.duel.batch.scores(),
                "is_success": np.zeros(n, np.bool_),
                "illegal_action": np.zeros(n, np.bool_)}

    def action_masks(self) -> np.ndarray:
        """``(num_envs, n_actions) bool``: the learner's legal actions in every game."""
        return self.duel.masks.copy()

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One picture per game (``render_mode="rgb_array"``)."""
        if self.render_mode is None:
            return None
        kind = self.kind
        return tuple(kind.render_rgb(kind.game_type.from_batch(self.batch, i))
                     for i in range(self.num_envs))


_ENDING_KEYS = ("learner_seat", "winner", "scores", "is_success", "illegal_action")


def _autoreset_mode(mode: Any) -> Any:
    """``NEXT_STEP`` or ``SAME_STEP`` from the enum or its name (``"next_step"``, ...)."""
    names = {"next_step": NEXT_STEP, "nextstep": NEXT_STEP, "same_step": SAME_STEP,
             "samestep": SAME_STEP}
    if mode in (NEXT_STEP, SAME_STEP):
        return mode
    key = str(getattr(mode, "value", mode)).lower().replace("-", "_")
    if key in names:
        return names[key]
    raise ValueError(f"autoreset_mode must be 'next_step' or 'same_step', got {mode!r}")
