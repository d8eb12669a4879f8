"""A policy network plays a move: the one implementation every learned player goes through.

:func:`masked_actions` turns a batch of logits and legal masks into actions: the most
likely legal action, or one drawn from the distribution over the legal actions with a
numpy generator (so a seeded player repeats its games); the ``az-policy`` agent plays its
network's logits through it. :func:`policy_actions` does the same for a
``MaskableActorCriticPolicy`` and its observations, and :class:`PolicyAgent`
is that as an :class:`~.base.Agent`: it shows the policy what the learner saw in training,
the ego-centric observation of :func:`patchwork_env.views.observation.observe` for the player to
move. The ``ppo`` agent, the learner in training's evaluations and the snapshots of the
self-play pool all play this way.

To play against a model (a saved file, a ``MaskablePPO`` model or its ``.policy``) in an
environment, make it an agent and pass that as the opponent::

    venv.set_opponent(PolicyAgent.from_model(model, seed=0))
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from patchwork_env import GameBatch
from patchwork_env.agents.base import Agent, check_rows
from patchwork_env.views.observation import observe

if TYPE_CHECKING:  # torch and sb3-contrib are imported when a policy is played, not before
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy


def policy_logits(policy: MaskableActorCriticPolicy, obs: np.ndarray) -> torch.Tensor:
    """``(k, n_actions)``: the policy's action logits for ``k`` observations, unmasked."""
    import torch
    from stable_baselines3.common.policies import BasePolicy

    with torch.no_grad():
        x = torch.as_tensor(np.asarray(obs, np.float32), device=policy.device)
        features = BasePolicy.extract_features(policy, x, policy.pi_features_extractor)
        return policy.action_net(policy.mlp_extractor.forward_actor(features))


def masked_actions(logits: np.ndarray, masks: np.ndarray, deterministic: bool = True,
                   rng: np.random.Generator | None = None) -> np.ndarray:
    """``(k,) int64``: an action for each row of ``logits`` (``(k, n_actions)``), always
    one that ``masks`` allows.

    Deterministic: the legal action of the highest logit. Otherwise a draw from the
    distribution over the legal actions (a softmax of their logits) with ``rng``, which
    sampling needs; the same generator state gives the same draws.
    """
    masks = np.asarray(masks, dtype=bool)
    if masks.ndim != 2 or len(masks) != len(logits):
        raise ValueError(f"masks must be one row per observation, got shape {masks.shape} "
                         f"for {len(logits)} observations")
    if not masks.any(axis=1).all():
        raise ValueError("every position needs at least one legal action")
    if not deterministic and rng is None:
        raise ValueError("sampling a policy's moves needs a numpy Generator (rng)")
    if len(logits) == 0:
        return np.zeros(0, np.int64)
    logits = np.array(logits, dtype=np.float64)
    logits[~masks] = -np.inf
    if deterministic:
        return logits.argmax(axis=1).astype(np.int64)
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))  # 0 off the mask
    cumulative = weights.cumsum(axis=1)
    draws = rng.random(len(logits)) * cumulative[:, -1]
    # The first action whose cumulative weight exceeds the draw: one of positive weight,
    # so a legal one; if rounding makes the draw the total, the last legal action.
    chosen = (cumulative <= draws[:, None]).sum(axis=1)
    last = masks.shape[1] - 1 - masks[:, ::-1].argmax(axis=1)
    return np.minimum(chosen, last).astype(np.int64)


def policy_actions(policy: MaskableActorCriticPolicy, obs: np.ndarray, masks: np.ndarray,
                   deterministic: bool = True, rng: np.random.Generator | None = None
                   ) -> np.ndarray:
    """``(k,) int64``: the :func:`masked_actions` of the policy's logits for ``obs``."""
    masks = np.asarray(masks, dtype=bool)
    if masks.ndim != 2 or len(masks) != len(obs):
        raise ValueError(f"masks must be one row per observation, got shape {masks.shape} "
                         f"for {len(obs)} observations")
    if len(obs) == 0:
        return masked_actions(np.zeros(masks.shape, np.float32), masks, deterministic, rng)
    return masked_actions(policy_logits(policy, obs).cpu().numpy(), masks, deterministic, rng)


class PolicyAgent(Agent):
    """A policy network as a player: its most likely legal move, or one sampled from it.

    ``policy``: a ``MaskableActorCriticPolicy`` (this package's networks or sb3-contrib's
    MLP), used as it is (it is not copied: a policy that goes on learning plays as it is
    at each move). ``seed`` seeds the draws when ``deterministic`` is false.
    """

    spec = "policy"

    def __init__(self, policy: MaskableActorCriticPolicy, seed: int | None = None,
                 deterministic: bool = True, spec: str | None = None) -> None:
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

        super().__init__(seed)
        if not isinstance(policy, MaskableActorCriticPolicy):
            raise TypeError(f"a PolicyAgent plays a MaskableActorCriticPolicy, got "
                            f"{type(policy).__name__}")
        self.policy = policy
        self.deterministic = deterministic
        if spec is not None:
            self.spec = spec

    @classmethod
    def from_model(cls, model: Any, deterministic: bool = False,
                   seed: int | None = None) -> PolicyAgent:
        """An agent (usable as an environment's opponent) that plays ``model``: a model
        file's path (a policy file or a MaskablePPO zip), a ``MaskablePPO`` model, or its
        ``.policy``. It samples its moves unless ``deterministic``.

        A model in memory is played as it is: pass a saved file (or a loaded copy) to play
        against a frozen earlier self while the model goes on learning.
        """
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

        if isinstance(model, str | os.PathLike):
            from patchwork_env.agents.model_file import load_policy

            policy, spec = load_policy(model), f"policy:{Path(model).name}"
        else:
            policy = model if isinstance(model, MaskableActorCriticPolicy) else getattr(
                model, "policy", None)
            spec = type(model).__name__
            if not isinstance(policy, MaskableActorCriticPolicy):
                raise TypeError("from_model takes a model file's path, a MaskablePPO model "
                                f"or its policy, got {type(model).__name__}")
        return cls(policy, seed, deterministic, spec)

    def act(self, batch: GameBatch, rows: np.ndarray) -> np.ndarray:
        sub = batch[check_rows(batch, rows)]
        obs = observe(sub.state, sub.rules, sub.to_move)
        expected = self.policy.observation_space.shape
        if obs.shape[1:] != expected:
            raise ValueError(f"{self.spec} expects observations of shape {expected}, the "
                             f"rules {sub.rules} give {obs.shape[1:]}")
        return policy_actions(self.policy, obs, sub.legal_mask(), self.deterministic,
                              self.rng)
