"""The ``ppo`` agent: a trained policy loaded from a model file, played as a PolicyAgent.

The model is a policy file (``.pt``, see :mod:`.model_file`) or a ``MaskablePPO`` zip such
as a training run's ``best.zip``; with no path, the model shipped with the package
(:data:`DEFAULT_MODEL`). The agent plays it greedily (``ppo``) or samples its moves with its
own seeded generator (``ppo-sample``), through :class:`~.policy_agent.PolicyAgent`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from patchwork_env.agents.policy_agent import PolicyAgent
from patchwork_env.agents.shipped import PPO_MODEL
from patchwork_env.data.rules import get_rules
from patchwork_env.views.observation import layout

if TYPE_CHECKING:
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

DEFAULT_MODEL = PPO_MODEL
"""The shipped model that ``ppo`` with no path plays (package data of
``patchwork_env.models``)."""


class PPOAgent(PolicyAgent):
    """Plays a saved policy: its most likely legal move, or one sampled from it."""

    def __init__(self, path: str | Path | None = None, seed: int | None = None,
                 deterministic: bool = True, device: str = "cpu") -> None:
        self.path = Path(path) if path is not None else DEFAULT_MODEL
        name = "ppo" if deterministic else "ppo-sample"
        super().__init__(load_model(self.path, default=path is None, device=device), seed,
                         deterministic, spec=name if path is None else f"{name}:{path}")


def load_model(path: str | Path, default: bool = False, device: str = "cpu"
               ) -> MaskableActorCriticPolicy:
    """The policy saved at ``path``, on ``device`` (a device this machine has, see
    :mod:`~patchwork_env.agents.device`); ``FileNotFoundError`` / ``ValueError`` with a
    one-line reason if it is missing, unreadable or built for other observations."""
    from patchwork_env.agents.model_file import load_policy

    path = Path(path)
    if default and not path.is_file():
        raise FileNotFoundError(f"no model file at {path} (no model has been shipped yet: "
                                "pass ppo:PATH)")
    policy = load_policy(path, device)
    expected = layout(get_rules("default")).space.shape
    if policy.observation_space.shape != expected:
        raise ValueError(f"{path} was trained on observations of shape "
                         f"{policy.observation_space.shape}, this environment gives {expected}")
    return policy
