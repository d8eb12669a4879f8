"""The opponent pool of self-play: frozen snapshots of the learner, ``random`` and ``greedy``.

Each new game draws its opponent from the pool: ``random`` and ``greedy`` with their
weights, and the snapshots sharing the ``self`` weight equally (weights are renormalised
over the members present, so before the first snapshot only the fixed players are drawn).
A snapshot is added every few updates and the oldest one dropped once the pool is full.

:class:`PoolOpponent` plays the opponent's seat of a whole batch, each game against its
own member; :class:`SelfPlayVecEnv` is the training env that draws a member for every game
it starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.vec_env.base_vec_env import VecEnvStepReturn

from patchwork_env import GameBatch
from patchwork_env.agents.greedy import GreedyAgent
from patchwork_env.agents.policy_agent import policy_actions
from patchwork_env.engine.batch import sample_legal
from patchwork_env.envs.opponents import Opponent
from patchwork_env.integrations.sb3 import PatchworkVecEnv
from patchwork_env.views.observation import observe

FIXED_MEMBERS = ("random", "greedy")


@dataclass
class Snapshot:
    """A frozen copy of the learner's policy; it samples its moves (:func:`policy_actions`
    with the env's generator)."""

    name: str
    """``"self-<update>"``: the update after which it was taken."""
    policy: MaskableActorCriticPolicy


def clone_policy(policy: MaskableActorCriticPolicy,
                 weights: dict[str, torch.Tensor] | None = None) -> MaskableActorCriticPolicy:
    """A frozen policy of ``policy``'s class and settings on its device, with its weights or
    ``weights`` (and no optimiser state)."""
    copy = type(policy)(**policy._get_constructor_parameters()).to(policy.device)
    copy.load_state_dict(policy.state_dict() if weights is None else weights)
    copy.set_training_mode(False)
    copy.requires_grad_(False)
    return copy


class OpponentPool:
    """The members a game's opponent is drawn from, and the seeded draw itself."""

    def __init__(self, weights: dict[str, float], capacity: int, seed: int) -> None:
        unknown = set(weights) - {*FIXED_MEMBERS, "self"}
        if unknown or any(w < 0 for w in weights.values()) or not sum(weights.values()) > 0:
            raise ValueError(f"pool weights must be non-negative numbers for random, greedy "
                             f"and self, not all zero; got {weights}")
        if capacity < 1:
            raise ValueError(f"the pool must hold at least one snapshot, got {capacity}")
        self.weights = {k: float(weights.get(k, 0.0)) for k in (*FIXED_MEMBERS, "self")}
        self.capacity = capacity
        self.rng = np.random.default_rng(seed)
        self.snapshots: list[Snapshot] = []

    @property
    def names(self) -> list[str]:
        """The members in draw order: ``random``, ``greedy``, then the snapshots."""
        return [*FIXED_MEMBERS, *(s.name for s in self.snapshots)]

    def probabilities(self) -> np.ndarray:
        """The chance of each member of :attr:`names` being drawn."""
        n = len(self.snapshots)
        p = np.array([self.weights["random"], self.weights["greedy"],
                      *([self.weights["self"] / max(n, 1)] * n)])
        if not p.sum() > 0:  # only snapshots weigh anything and there are none yet
            p[: len(FIXED_MEMBERS)] = 1.0
        return p / p.sum()

    def sample(self, n: int) -> np.ndarray:
        """``(n,)`` indices into :attr:`names`, drawn with :meth:`probabilities`."""
        return self.rng.choice(len(self.names), size=n, p=self.probabilities())

    def add_snapshot(self, policy: MaskableActorCriticPolicy, name: str) -> None:
        """Freeze ``policy`` into the pool, dropping the oldest snapshot when it is full."""
        self.snapshots.append(Snapshot(name, clone_policy(policy)))
        del self.snapshots[: -self.capacity]

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to rebuild the pool (checkpoints store it)."""
        return {"weights": dict(self.weights), "capacity": self.capacity,
                "rng": self.rng.bit_generator.state,
                "snapshots": [(s.name, s.policy.state_dict()) for s in self.snapshots]}

    def load_state_dict(self, state: dict[str, Any], learner: MaskableActorCriticPolicy) -> None:
        """Restore a pool saved by :meth:`state_dict`; its snapshots are policies of the
        same kind as ``learner``."""
        self.weights = dict(state["weights"])
        self.capacity = int(state["capacity"])
        self.rng.bit_generator.state = state["rng"]
        self.snapshots = [Snapshot(name, clone_policy(learner, weights))
                          for name, weights in state["snapshots"]]


class PoolOpponent(Opponent):
    """Plays every game against the pool member assigned to it (see :meth:`assign`)."""

    name = "pool"

    def __init__(self, pool: OpponentPool, n_games: int) -> None:
        self.pool = pool
        self.members: list[str | Snapshot] = ["random"] * n_games
        """Each game's opponent, drawn at its start: a fixed player's name or a snapshot
        (which finishes the games it started even if the pool drops it meanwhile)."""
        self.previous = ["random"] * n_games
        """The name of the opponent of each game's previous game."""
        self._greedy = GreedyAgent()

    def start_games(self, rows: np.ndarray) -> None:
        """Draw a new opponent for the games ``rows``, which are about to start."""
        available: list[str | Snapshot] = [*FIXED_MEMBERS, *self.pool.snapshots]
        for row in rows.tolist():
            self.previous[row] = self.member_name(row)
        for row, k in zip(rows.tolist(), self.pool.sample(len(rows)).tolist(), strict=True):
            self.members[row] = available[k]

    def member_name(self, row: int) -> str:
        """The name of game ``row``'s opponent (``random``, ``greedy`` or ``self-<update>``)."""
        member = self.members[row]
        return member if isinstance(member, str) else member.name

    def act(self, batch: GameBatch, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = np.empty(len(rows), np.int64)
        masks = batch.legal_mask()[rows]
        members = [self.members[r] for r in rows.tolist()]
        for member in {id(m): m for m in members}.values():
            pick = np.array([m is member for m in members])
            sub = rows[pick]
            if member == "random":
                out[pick] = sample_legal(masks[pick], rng)
            elif member == "greedy":
                out[pick] = self._greedy.act(batch, sub)
            else:
                obs = observe(batch.state[sub], batch.rules, batch.to_move[sub])
                out[pick] = policy_actions(member.policy, obs, masks[pick],
                                           deterministic=False, rng=rng)
        return out


class SelfPlayVecEnv(PatchworkVecEnv):
    """:class:`~patchwork_env.integrations.sb3.PatchworkVecEnv` against an :class:`OpponentPool`.

    The ``info`` of a finished game names its opponent (``info["opponent"]``).
    """

    def __init__(self, n_envs: int, pool: OpponentPool, seed: int, **kwargs: Any) -> None:
        self.opponent = PoolOpponent(pool, n_envs)
        super().__init__(n_envs, self.opponent, seed=seed, **kwargs)

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, dones, infos = super().step_wait()
        for row in np.flatnonzero(dones).tolist():
            infos[row]["opponent"] = self.opponent.previous[row]
        return obs, rewards, dones, infos
