"""The PettingZoo AEC environment itself, without checks: :class:`raw_env`.

Two agents take turns, the one behind on the time track moving. The documentation page is
:class:`raw_env`'s docstring; :func:`patchwork_env.envs.aec.env` adds the checks of
PettingZoo's standard wrappers.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from numba import njit
from pettingzoo import AECEnv

from patchwork_env.data.rules import Rules
from patchwork_env.data.validation import check_action, check_options, check_render_mode, check_seed
from patchwork_env.engine.batch_kernels import checked_step_one
from patchwork_env.engine.kernels import OK, score, winner
from patchwork_env.envs.game_kinds import PATCHWORK, GameKind
from patchwork_env.envs.one_game import PlaysOneGame
from patchwork_env.envs.render_modes import render_game
from patchwork_env.envs.rewards import check_reward, final_rewards
from patchwork_env.views.game import Game
from patchwork_env.views.observation import SingleGameObserver, observe_one

AGENTS = ("player_0", "player_1")
_SEATS = {agent: seat for seat, agent in enumerate(AGENTS)}
RESET_OPTIONS = ("rules", "circle", "first_player")
OBSERVATION_MODES = ("dict", "flat")


@njit(cache=True)
def _play(state, action, obs, mask, income_before, leather_spaces, bonus_squares, track_end,
          bonus_points, income_spaces, leather_track, obs_track_end, patch_features):
    """Validate and play ``action`` in the one game of ``state``, and write what the player
    now to move sees into ``obs`` and ``mask`` (:func:`~.observation.observe_one`, whose
    arguments close the list): one compiled call per move. Returns ``(error, score 0,
    score 1, to_move, winner)``: the engine's error code (``OK``, 0, if played; the game is
    unchanged otherwise) and the game as it then stands (``winner`` -1 until the end)."""
    error = checked_step_one(state, 0, action, income_before, leather_spaces, bonus_squares,
                             track_end)
    s = state[0]
    if error == OK and s.to_move >= 0:
        observe_one(state, s.to_move, True, obs, mask, income_spaces, leather_track,
                    obs_track_end, patch_features)
    return (error, score(s, 0, bonus_points), score(s, 1, bonus_points), np.int64(s.to_move),
            winner(s, bonus_points) if s.to_move < 0 else np.int64(-1))


class raw_env(PlaysOneGame, AECEnv):
    """
    # Patchwork

    | Creation           | `patchwork_env.env()`                                 |
    |--------------------|-------------------------------------------------------|
    | Registered as      | `pettingzoo.make("aec", "patchwork_env/patchwork-v0")` |
    | Actions            | Discrete                                              |
    | Parallel API       | Yes, through `turn_based_aec_to_parallel`             |
    | Manual Control     | No                                                    |
    | Agents             | `agents= ['player_0', 'player_1']`                    |
    | Agents             | 2                                                     |
    | Action Shape       | (1,)                                                  |
    | Action Values      | Discrete(2026)                                        |
    | Observation Shape  | (1189,)                                               |
    | Observation Values | [0, 1] except buttons, income and pending leather     |

    Two players sew quilts from patches bought with buttons; time is the other currency.
    The player whose token is further behind on the time track moves, so an agent often
    moves several times in a row: these are ordinary AEC steps, and `agent_selection`
    names the agent to move. `player_0` is seat 0 of the engine (`Game`, `GameBatch`).

    ### Observation Space

    The observation is a dictionary with an `'observation'` element, a `float32` vector
    described below, and an `'action_mask'` (see Legal Actions Mask). The vector is
    ego-centric: every pair of values lists the observing agent first and its opponent
    second, and the first quilt is the observer's. It is complete (Patchwork has no hidden
    information) and fixed in size; `patchwork_env.views.observation.layout(rules).split(obs)`
    cuts it into the named fields below.

    | Index       | Field             | Value                                              |
    |-------------|-------------------|----------------------------------------------------|
    | 0 - 161     | `quilts`          | (2, 9, 9): 1 on covered cells, cell = row * 9 + col |
    | 162 - 163   | `position`        | space on the time track / 53                       |
    | 164 - 165   | `buttons`         | buttons / 50                                       |
    | 166 - 167   | `income`          | button symbols on the quilt / 10                   |
    | 168 - 169   | `income_ahead`    | income spaces still ahead of the token / 9         |
    | 170 - 171   | `to_move`         | 1 for the player to move (both 0 once it is over)  |
    | 172 - 173   | `pending_leather` | leather patches the player must place now          |
    | 174 - 175   | `bonus`           | 1 for the holder of the 7x7 bonus tile             |
    | 176 - 177   | `finished_first`  | 1 for who reached the end first (wins ties)        |
    | 178 - 1134  | `circle`          | (33, 29): one row per patch of the circle, below   |
    | 1135 - 1188 | `leather_track`   | (54,): 1 on each space where a leather patch lies  |

    Row `k` of `circle` is the `k`-th patch clockwise after the neutral token (rows 0 - 2
    can be bought): `present, cost / 10, time / 6, income / 3`, then the patch's shape as
    printed in the rules (orientation 0) on a 5x5 grid, row-major, 1 on covered cells.
    Rows past the end of the circle are all 0. Under other rule sets the divisors 53 and
    9 are the rules' last space and number of income spaces, and `leather_track` has one
    entry per space of the track.

    With `observation_mode="flat"` the observation is the vector alone (a `Box`), and the
    mask is in `infos[agent]["action_mask"]`, PettingZoo's other convention: SuperSuit's
    observation wrappers (`flatten_v0`, `frame_stack_v1`, `normalize_obs_v0`, `dtype_v0`)
    and libraries whose default encoders take a `Box` then work unchanged.

    #### Legal Actions Mask

    The legal moves of the agent to move are in the `action_mask` element (`int8`, 2026
    entries; in `infos[agent]["action_mask"]` with `observation_mode="flat"`); it is all
    zeros for the other agent. Taking an illegal move ends the game
    with a reward of -1 (`env(illegal_reward=...)`, a number) for the agent that moved and
    0 for the other (`raw_env` raises `ValueError` instead and changes nothing).

    ### Errors

    A bad argument changes nothing and raises an error that names it:

    | Input                                                           | Error          |
    |-----------------------------------------------------------------|----------------|
    | an action that is not an integer: a float, a bool, a string     | `TypeError`    |
    | an integer action outside 0 - 2025                              | `ValueError`   |
    | `None` from the agent to move, not `None` from a finished agent | `ValueError`   |
    | a seed that is not an int: a bool, a float, a list, an array    | `TypeError`    |
    | a negative seed                                                 | `ValueError`   |
    | `options` that are not a dict                                   | `TypeError`    |
    | an option of the wrong kind or value                            | either         |
    | `step`, `observe`, `render` (...) before the first `reset`      | `RuntimeError` |

    An int-like numpy value (`np.int64(5)`, a 0-d integer array) is an action like the
    int; seeds are read as `Game.new` reads them (any non-negative int, numpy's too).

    ### Action Space

    | Action      | Meaning                                                     |
    |-------------|-------------------------------------------------------------|
    | 0 - 1943    | buy and place: `slot * 648 + orientation * 81 + anchor`     |
    | 1944        | advance: move in front of the opponent, 1 button per space  |
    | 1945 - 2025 | place a pending leather patch on cell `action - 1945`       |

    A buy takes the patch in `slot` (0 - 2, counted clockwise from the neutral token),
    turns the printed shape to `orientation = mirror * 4 + rotation` (mirrored left-right
    first, then `rotation` quarter turns clockwise) and puts the top-left corner of its
    bounding box on cell `anchor = row * 9 + col`. Only one orientation of each distinct
    shape is ever legal. `patchwork_env.format_action` and `parse_action` translate
    actions to and from text such as `buy slot 1 o3 at c4`.

    ### Rewards

    Zero until the game ends. Then, with `reward="win"` (default), +1 for the winner and
    -1 for the loser (higher score wins; on equal scores the player who reached the end
    first). With `reward="score"`, each agent gets `score_scale * (own score - opponent's
    score)` (`score_scale=0.02` by default; 0 to both on equal scores). Both schemes are
    zero-sum.

    ### Infos

    Every agent's `infos` hold the same keys with the same types at every step (so that
    collectors which stack infos, Tianshou's among them, accept them): `scores`, the
    current scores (`{'player_0': s0, 'player_1': s1}`, final at the end), and `winner`,
    the winning seat (0 or 1) once the game is over and -1 before; with
    `observation_mode="flat"` also `action_mask`.

    ### Arguments

    `raw_env(rules="default", reward="win", score_scale=0.02, render_mode=None,
    observation_mode="dict")`: `rules` is a preset name (`"default"`, `"revised"`,
    `"classic"`) or a `Rules`; `observation_mode` is `"dict"` or `"flat"` (above);
    `render_mode` is `"ansi"` (a text picture), `"human"` (prints it after every step) or
    `"rgb_array"` (an image of both quilts, the time track and the circle).
    `reset(seed=None, options=None)`: the seed draws the circle and the first player
    exactly as `Game.new(seed)`; `options` (a dict) may give `rules`, `circle` (patch ids
    clockwise from the neutral token, patch 0 last) and `first_player` (0 or 1); other
    keys are ignored with a warning.

    ### Version History

    * v0 (patchwork-env 0.1.0): the environment as documented here, with
      `observation_mode="flat"`, infos with the same keys at every step (`winner` a seat,
      -1 until the end), and `env()` checking what the standard wrappers check, refusing a
      value that is not a move with `TypeError` or `ValueError` (see Errors).
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "patchwork_v0",
        "render_modes": ["human", "ansi", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 1,
    }
    kind: ClassVar[GameKind] = PATCHWORK
    """The game played (:mod:`.game_kinds`)."""
    RESET_OPTIONS: ClassVar[tuple[str, ...]] = RESET_OPTIONS
    _play_kernel = staticmethod(_play)
    """Validates and plays one move and observes the result in one compiled call."""

    def __init__(self, rules: str | Rules = "default", reward: str = "win",
                 score_scale: float = 0.02, render_mode: str | None = None,
                 observation_mode: str = "dict") -> None:
        super().__init__()
        check_render_mode(render_mode, self.metadata["render_modes"])
        if observation_mode not in OBSERVATION_MODES:
            raise ValueError(f"observation_mode must be one of {OBSERVATION_MODES}, got "
                             f"{observation_mode!r}")
        self.flat = observation_mode == "flat"
        check_reward(reward, score_scale)
        self.rules = self.kind.get_rules(rules)
        self._n_actions = n_actions = self.kind.n_actions
        self.reward = reward
        self.score_scale = float(score_scale)
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        obs_space = self.kind.layout(self.rules).space
        self.observation_spaces = {
            a: obs_space if self.flat else
            spaces.Dict({"observation": obs_space,
                         "action_mask": spaces.Box(0, 1, (n_actions,), np.int8)})
            for a in AGENTS
        }
        self.action_spaces = {a: spaces.Discrete(n_actions) for a in AGENTS}
        self._rng = np.random.default_rng()
        self._game: Game | None = None
        self._seen_next: tuple[str, np.ndarray, np.ndarray] | None = None
        """What the agent to move sees, computed with the move that made it so, until it
        is handed out by :meth:`observe` or the game changes."""

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ----- the AEC cycle ----------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        seed = check_seed(seed)  # as Game.new reads it
        rules, circle, first = self._read_options(options)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        if circle is None and first is None and self._game is not None \
                and self._game.rules == rules:
            self._game.batch.reset(rng=self._rng)  # draws as Game.new(seed) does
        else:
            kind = self.kind
            circle, first = kind.random_setup(self._rng, circle, first)
            self._game = kind.game_type(kind.batch_type.from_setups([circle], [first], rules))
            self._observer = self._make_observer(rules)
            self._play_args = self._play_arguments()
        self._seen_next = None
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {a: {} for a in AGENTS}
        self.agent_selection = AGENTS[self._game.to_move]
        self._post_infos(*self._game.scores())

    def _make_observer(self, rules: Any) -> SingleGameObserver:
        """What a player sees of one game under ``rules``, with its legal mask."""
        return SingleGameObserver(rules)

    def _play_arguments(self) -> tuple:
        """The arguments that follow ``mask`` in :attr:`_play_kernel`, for the new game."""
        tables = self._game.batch.tables
        return (*tables.move_args, tables.bonus_points, *self._observer.args)

    def _read_options(self, options: Any) -> tuple[Any, Any, int | None]:
        # PettingZoo's own api tests pass an unknown key, so that only warns.
        options = check_options(options, self.RESET_OPTIONS, unknown="warn")
        kind = self.kind
        rules = kind.get_rules(options.get("rules", self.rules))
        if rules != self.rules and kind.layout(rules).space != kind.layout(self.rules).space:
            raise ValueError(f"rules {rules} change the observation space; create a new "
                             "environment with rules=... instead")
        return rules, options.get(kind.setup_option), options.get("first_player")

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = _SEATS.get(agent)
        if seat is None:
            raise ValueError(f"unknown agent {agent!r}: the agents are {list(AGENTS)}")
        seen = self._seen_next
        if seen is not None and seen[0] == agent:
            self._seen_next = None  # handed out once: a second call gets arrays of its own
            obs, mask = seen[1], seen[2]
        else:
            state = self._live().batch.state
            to_move = agent == self.agent_selection and not self.terminations[agent]
            obs, mask = self._observer(state, seat, to_move and not self.flat)
        return obs if self.flat else {"observation": obs, "action_mask": mask}

    def _post_infos(self, s0: int, s1: int, winner: int = -1,
                    mask: np.ndarray | None = None) -> None:
        """Every agent's ``infos``, with the same keys and types at every step: the current
        scores ``s0, s1`` and the ``winner`` (a seat, -1 until the end); in flat mode also
        the ``action_mask`` (the legal moves for the agent to move, ``mask`` where it is
        known already, and zeros for the other)."""
        infos = self.infos
        infos["player_0"] = {"scores": {"player_0": s0, "player_1": s1}, "winner": winner}
        infos["player_1"] = {"scores": {"player_0": s0, "player_1": s1}, "winner": winner}
        if self.flat:
            mover = self.agent_selection
            for a in AGENTS:
                if a != mover or self.terminations[a]:
                    infos[a]["action_mask"] = np.zeros(self._n_actions, np.int8)
                else:
                    infos[a]["action_mask"] = (mask if mask is not None else
                                               self._game.batch.legal_mask()[0].view(np.int8))

    def step(self, action: Any) -> None:
        game = self._live()
        self._seen_next = None
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._dead_step(agent, action)
            return
        if type(action) is not int or not 0 <= action < self._n_actions:
            action = self._checked_move(agent, action)
        obs = np.empty(self._observer.size, np.float32)
        mask = np.empty(self._n_actions, np.int8)
        error, s0, s1, to_move, winner = self._play_kernel(game.batch.state, action, obs, mask,
                                                           *self._play_args)
        if error:
            game.step(action)  # refused, changing nothing: raises the engine's ValueError
        self._cumulative_rewards[agent] = 0.0
        if to_move < 0:
            self._clear_rewards()
            self._finish(s0, s1, winner)
            self._accumulate_rewards()
        else:  # every reward is 0 until the end: nothing to clear or add up
            self.agent_selection = AGENTS[to_move]
            self._seen_next = (self.agent_selection, obs, mask)
            self._post_infos(s0, s1, mask=mask)
        if self.render_mode == "human":
            self.render()

    def _checked_move(self, agent: str, action: Any) -> int:
        """``action`` as the move of ``agent`` (to move), read by
        :func:`~patchwork_env.data.validation.check_action`; ``ValueError`` for ``None``."""
        if action is None:
            raise ValueError(f"{agent} is to move: None is only for finished agents")
        return check_action(action, self._n_actions)

    def _dead_step(self, agent: str, action: Any) -> None:
        """The step of a finished agent: only ``None`` (PettingZoo's dead step)."""
        if action is not None:
            raise ValueError(f"{agent} has finished: its only action is None, got "
                             f"{type(action).__name__} {action!r}")
        self._was_dead_step(action)

    def _finish(self, s0: int, s1: int, winner: int) -> None:
        paid = final_rewards(np.array([[s0, s1], [s0, s1]]), np.full(2, winner), np.arange(2),
                             self.reward, self.score_scale)
        for a, r in zip(AGENTS, paid.tolist(), strict=True):
            self.rewards[a] = r
            self.terminations[a] = True
        # The agent that did not make the last move is shown the end first.
        self.agent_selection = AGENTS[1 - AGENTS.index(self.agent_selection)]
        self._post_infos(s0, s1, winner)

    # ----- pictures ---------------------------------------------------------------------
    def render(self) -> str | np.ndarray | None:
        return render_game(self._live(), self.render_mode)

    def close(self) -> None:
        """Nothing to release."""
