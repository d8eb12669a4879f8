"""The Gymnasium environments of Patchwork Draft: one game against an opponent, and many.

They are the Patchwork environments (:mod:`.gym_env`, :mod:`.vector_env`) playing the
draft (:data:`~.game_kinds.DRAFT`): the same duel, opponents, rewards and checks. The
documentation pages are the two classes' docstrings.
"""

from __future__ import annotations

from typing import ClassVar

from patchwork_env.envs.game_kinds import DRAFT, GameKind
from patchwork_env.envs.gym_env import PatchworkEnv
from patchwork_env.envs.vector_env import PatchworkVectorEnv


class PatchworkDraftEnv(PatchworkEnv):
    """Patchwork Draft against an opponent: the agent holds one seat, the opponent the other.

    ## Description
    The drafting variant of Patchwork (section 13 of the rules page). The environment
    plays the opponent's moves inside :meth:`step`, so every observation is one where the
    agent is to move (or the final position). The agent's seat is drawn at random for
    every episode unless ``learner_seat`` fixes it; the first player comes from the setup.

    ## Action Space
    ``Discrete(1947)``: buys ``0..1943`` encoded as in Patchwork (``slot * 648 +
    orientation * 81 + anchor``), discards ``1944..1946`` (slot ``action - 1944``), legal
    only when no face-up patch can be bought. :meth:`action_masks` (and
    ``info["action_mask"]``, int8) give the legal actions.

    ## Observation Space
    ``Box(0, high, (438,), float32)``: the ego-centric vector of
    :mod:`patchwork_env.views.draft_observation` (the agent's quilt and figures first),
    documented field by field on the PettingZoo environment's page
    (:class:`patchwork_env.envs.draft_aec.raw_env`). It shows which patches the deck
    holds, never their order.

    ## Rewards
    0 until the end; then +1 for a win and -1 for a loss (``reward="win"``; equal scores go
    to the player who moved second, so there are no draws), or ``score_scale * (own score
    - opponent's score)`` with ``reward="score"``. An illegal action ends the episode with
    ``illegal_reward`` (default -1) and ``info["illegal_action"] = True``.

    ## Episode End
    Terminated when the game ends or after an illegal action; never truncated.

    ## Info
    As in :class:`~patchwork_env.envs.gym_env.PatchworkEnv`: ``action_mask``
    (``(1947,) int8``), ``learner_seat``, ``winner``, ``scores``, ``is_success`` and
    ``illegal_action``, every key present after every ``reset`` and ``step``.

    ## Arguments
    ``opponent``: ``"random"``, an :class:`~patchwork_env.envs.opponents.Opponent`, an
    agent with ``act(batch, rows)`` that plays a ``DraftBatch``, or a policy
    ``(observations, masks) -> actions``; ``learner_seat``: 0, 1 or None (random);
    ``rules``: a draft preset name (``"default"``, ``"no-stars"``), a dict or a
    ``DraftRules``; ``reward``, ``score_scale``, ``illegal_reward``: as above;
    ``render_mode``: ``"ansi"``, ``"human"`` or ``"rgb_array"``.

    ``reset(seed=s)`` sets the game up exactly as ``DraftGame.new(seed=s)`` and the AEC
    environment's ``reset(seed=s)``; ``options`` may give ``deck`` (all 33 patch ids: the
    face-up three, then the deck from the top), ``first_player`` and ``learner_seat``.

    ## Errors
    As in :class:`~patchwork_env.envs.gym_env.PatchworkEnv`: an action or a seed that is
    not an integer, ``TypeError``; an action outside ``0..1946`` or a negative seed,
    ``ValueError``; a step after the end, ``RuntimeError``; nothing changes.

    ## Version History
    * v0 (patchwork-env 0.1.0): the environment as documented here.
    """

    RESET_OPTIONS = ("deck", "first_player", "learner_seat")
    kind: ClassVar[GameKind] = DRAFT


class PatchworkDraftVectorEnv(PatchworkVectorEnv):
    """``num_envs`` games of Patchwork Draft against an opponent, stepped together.

    Each game works as :class:`PatchworkDraftEnv` does, but all games move in one compiled
    call per operation. ``gymnasium.make_vec("patchwork_env/PatchworkDraft-v0",
    num_envs=64, vectorization_mode="vector_entry_point")`` builds it; so does
    ``PatchworkDraftVectorEnv(64, opponent=..., seed=0)``.

    ## Spaces
    ``single_observation_space``: the ``Box`` of
    :mod:`patchwork_env.views.draft_observation` (438 values);
    ``single_action_space``: ``Discrete(1947)``; the batched spaces stack them.

    ## Infos, Autoreset
    As in :class:`~patchwork_env.envs.vector_env.PatchworkVectorEnv`: ``action_mask``
    ``(n, 1947) int8``, ``learner_seat``, ``winner``, ``scores``, ``is_success``,
    ``illegal_action``; ``autoreset_mode="next_step"`` (default) or ``"same_step"``
    (final observations and infos in ``infos["final_obs"]`` and ``infos["final_info"]``).

    ## Seeding
    ``reset(seed=s)`` sets game ``i`` up as ``DraftGame.new(seed=s + i)`` (a list gives
    each game its own seed); later games draw from the env's generator. ``options`` may
    give a ``deck`` and ``first_player`` for every game. A bad seed raises ``TypeError`` or
    ``ValueError`` naming it, and the games stay as they were.

    ## Version History
    * v0: the native vector env of ``patchwork_env/PatchworkDraft-v0`` (patchwork-env
      0.1.0).
    """

    kind: ClassVar[GameKind] = DRAFT


__all__ = ["PatchworkDraftEnv", "PatchworkDraftVectorEnv"]
