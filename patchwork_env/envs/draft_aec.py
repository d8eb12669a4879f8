"""The PettingZoo AEC environment of Patchwork Draft: ``env()`` and :class:`raw_env`.

The draft plays through the main game's AEC machinery (:mod:`.aec_raw`, :mod:`.aec`) with
its own game (:data:`~.game_kinds.DRAFT`), observation and compiled move. The
documentation page is :class:`raw_env`'s docstring.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numba import njit

from patchwork_env.engine.draft_batch_kernels import checked_step_one
from patchwork_env.engine.draft_kernels import OK, score, winner
from patchwork_env.envs.aec import CheckedEnv as PatchworkCheckedEnv
from patchwork_env.envs.aec_raw import AGENTS
from patchwork_env.envs.aec_raw import raw_env as patchwork_raw_env
from patchwork_env.envs.game_kinds import DRAFT, GameKind
from patchwork_env.views.draft_observation import DraftSingleGameObserver, observe_draft_one


@njit(cache=True)
def _play(state, action, obs, mask, star_bits, star_lo, star_hi, features, stars):
    """Validate and play ``action`` in the one draft game of ``state`` and write what the
    player now to move sees into ``obs`` and ``mask``, in one compiled call. Returns
    ``(error, score 0, score 1, to_move, winner)`` (``winner`` -1 until the end)."""
    error = checked_step_one(state, 0, action, star_bits, star_lo, star_hi)
    s = state[0]
    if error == OK and s.to_move >= 0:
        observe_draft_one(state, s.to_move, True, obs, mask, features, stars)
    return (error, score(s, 0), score(s, 1), np.int64(s.to_move),
            winner(s) if s.to_move < 0 else np.int64(-1))


class raw_env(patchwork_raw_env):
    """
    # Patchwork Draft

    | Creation           | `patchwork_env.envs.draft_aec.env()`                          |
    |--------------------|---------------------------------------------------------------|
    | Registered as      | `pettingzoo.make("aec", "patchwork_env/patchwork_draft-v0")`  |
    | Actions            | Discrete                                                      |
    | Parallel API       | Yes, through `turn_based_aec_to_parallel`                     |
    | Manual Control     | No                                                            |
    | Agents             | `agents= ['player_0', 'player_1']`                            |
    | Agents             | 2                                                             |
    | Action Shape       | (1,)                                                          |
    | Action Values      | Discrete(1947)                                                |
    | Observation Shape  | (438,)                                                        |
    | Observation Values | [0, 1] except buttons and points                              |

    The drafting variant of Patchwork (section 13 of the rules page): the same patches,
    quilts and placement, no time track. The players take turns; each buys one of three
    face-up patches and sews it on at once, or, when they can buy none, discards one. Full
    rows and columns score a point and a button, a starred patch on a star square a point.
    `player_0` is seat 0 of the engine (`DraftGame`, `DraftBatch`).

    ### Observation Space

    The observation is a dictionary with an `'observation'` element, a `float32` vector
    described below, and an `'action_mask'` (see Legal Actions Mask). The vector is
    ego-centric: every pair lists the observing agent first and its opponent second, and
    the first quilt is the observer's. It holds everything both players know and nothing
    more: which patches the face-down deck holds, but never their order (rule 13.1).
    `patchwork_env.views.draft_observation.draft_layout(rules).split(obs)` cuts it into
    the named fields below.

    | Index       | Field             | Value                                               |
    |-------------|-------------------|-----------------------------------------------------|
    | 0 - 161     | `quilts`          | (2, 9, 9): 1 on covered cells, cell = row * 9 + col |
    | 162 - 163   | `buttons`         | buttons / 20                                        |
    | 164 - 165   | `points`          | row, column and star points / 20                    |
    | 166 - 167   | `to_move`         | 1 for the player to move (both 0 once it is over)   |
    | 168 - 169   | `first_player`    | 1 for the player who moved first (the other wins ties) |
    | 170 - 205   | `lines`           | (2, 18): 1 for each full row 0 - 8, then column 0 - 8 |
    | 206 - 289   | `face_up`         | (3, 28): one row per slot of the face-up row, below |
    | 290 - 322   | `deck`            | (33,): 1 for each patch id still in the deck        |
    | 323         | `deck_size`       | patches in the face-down deck / 30                  |
    | 324 - 356   | `starred_patches` | (33,): 1 for each patch id that carries a star      |
    | 357 - 437   | `star_squares`    | (9, 9): 1 on the star squares                       |

    Row `k` of `face_up` is the patch in slot `k`: `present, cost / 10, starred`, then the
    patch's shape as printed in the rules (orientation 0) on a 5x5 grid, row-major, 1 on
    covered cells; all 0 for a slot emptied at the end. `starred_patches` and
    `star_squares` are the rule set's (the same all game).

    With `observation_mode="flat"` the observation is the vector alone (a `Box`) and the
    mask is in `infos[agent]["action_mask"]`, as in the Patchwork environment.

    #### Legal Actions Mask

    The legal moves of the agent to move are in the `action_mask` element (`int8`, 1947
    entries; in `infos[agent]["action_mask"]` with `observation_mode="flat"`); it is all
    zeros for the other agent. Taking an illegal move ends the game with a reward of -1
    (`env(illegal_reward=...)`) for the agent that moved and 0 for the other (`raw_env`
    raises `ValueError` instead and changes nothing).

    ### Errors

    As in the Patchwork environment: a bad argument changes nothing and raises an error
    that names it. An action that is not an integer (a float, a bool, a string), a seed
    that is not an int, `options` that are not a dict: `TypeError`. An integer action
    outside 0 - 1946, `None` from the agent to move or anything but `None` from a
    finished agent, a negative seed: `ValueError`. `step`, `observe`, `render` before the
    first `reset`: `RuntimeError`.

    ### Action Space

    | Action      | Meaning                                                     |
    |-------------|-------------------------------------------------------------|
    | 0 - 1943    | buy and place: `slot * 648 + orientation * 81 + anchor`     |
    | 1944 - 1946 | discard the patch of slot `action - 1944`                   |

    A buy is encoded exactly as in Patchwork: the patch in `slot` (0 - 2 of the face-up
    row), turned to `orientation = mirror * 4 + rotation`, its bounding box's top-left
    corner on cell `anchor = row * 9 + col`; only canonical orientations are legal. The
    discards are legal only when no face-up patch can be bought (rule 13.6).
    `patchwork_env.data.draft_actions.format_draft_action` and `parse_draft_action`
    translate actions to and from text such as `buy slot 1 o3 at c4`, `discard slot 2`.

    ### Rewards

    Zero until the game ends. Then, with `reward="win"` (default), +1 for the winner and
    -1 for the loser: the higher score wins, and on equal scores the player who moved
    second (rule 13.8), so there are no draws. With `reward="score"`, each agent gets
    `score_scale * (own score - opponent's score)` (`score_scale=0.02` by default; 0 to
    both on equal scores). Both schemes are zero-sum.

    ### Infos

    As in the Patchwork environment, with the same keys and types at every step:
    `scores` (`{'player_0': s0, 'player_1': s1}`), `winner` (a seat once the game is
    over, -1 before) and, with `observation_mode="flat"`, `action_mask`.

    ### Arguments

    `raw_env(rules="default", reward="win", score_scale=0.02, render_mode=None,
    observation_mode="dict")`: `rules` is a draft preset name (`"default"`,
    `"no-stars"`), a dict or a `DraftRules`; `render_mode` is `"ansi"` (the text view),
    `"human"` (prints it after every step) or `"rgb_array"` (an image of both quilts, the
    face-up row, the deck, buttons, points and stars). `reset(seed=None, options=None)`:
    the seed draws the deck and the first player exactly as `DraftGame.new(seed)`;
    `options` (a dict) may give `rules`, `deck` (all 33 patch ids: the three face-up ones,
    then the deck from the top) and `first_player` (0 or 1); other keys are ignored with
    a warning.

    ### Version History

    * v0 (patchwork-env 0.1.0): the environment as documented here.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "patchwork_draft_v0",
        "render_modes": ["human", "ansi", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 1,
    }
    kind: ClassVar[GameKind] = DRAFT
    RESET_OPTIONS: ClassVar[tuple[str, ...]] = ("rules", "deck", "first_player")
    _play_kernel = staticmethod(_play)

    def _make_observer(self, rules: Any) -> DraftSingleGameObserver:
        return DraftSingleGameObserver(rules)

    def _play_arguments(self) -> tuple:
        return (*self._game.batch.move_args, *self._observer.args)


class CheckedEnv(PatchworkCheckedEnv, raw_env):
    """The draft's :class:`raw_env` with the checks of PettingZoo's standard wrappers, as
    :class:`patchwork_env.envs.aec.CheckedEnv` adds them to the Patchwork environment."""


def env(illegal_reward: float = -1.0, **kwargs: Any) -> CheckedEnv:
    """:class:`raw_env` with the checks of PettingZoo's standard wrappers; ``kwargs`` go to
    :class:`raw_env`. An illegal move ends the game: ``illegal_reward`` for the mover, 0
    for the other. A value that is not a move changes nothing and raises: ``TypeError``
    if it is not an integer, ``ValueError`` if it lies outside ``0..1946``."""
    return CheckedEnv(illegal_reward, **kwargs)


__all__ = ["AGENTS", "CheckedEnv", "env", "raw_env"]
