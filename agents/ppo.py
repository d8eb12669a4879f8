"""A learned policy: a MaskablePPO checkpoint, played greedily or by sampling its policy.

The agent sees exactly what the learner saw in training: the ego-centric observation of
:func:`patchwork_env.observation.observe` for the player to move, with the legal mask.
Sampling draws from the masked policy with the agent's own generator, so a seeded agent
plays the same moves every time.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from patchwork_env import GameBatch
from patchwork_env.observation import layout, observe
from patchwork_env.rules import get_rules

from .base import Agent, check_rows

DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "models" / "ppo.zip"
"""The shipped model that ``ppo`` with no path plays."""


class PPOAgent(Agent):
    """Plays a MaskablePPO model: its most likely legal move, or one sampled from it."""

    def __init__(self, path: str | Path | None = None, seed: int | None = None,
                 deterministic: bool = True) -> None:
        super().__init__(seed)
        self.path = Path(path) if path is not None else DEFAULT_MODEL
        self.deterministic = deterministic
        name = "ppo" if deterministic else "ppo-sample"
        self.spec = name if path is None else f"{name}:{path}"
        self.model = load_model(self.path, default=path is None)

    def act(self, batch: GameBatch, rows: np.ndarray) -> np.ndarray:
        import torch

        rows = check_rows(batch, rows)
        sub = batch[rows]
        obs = observe(sub.state, sub.rules, sub.to_move)
        masks = sub.legal_mask()
        if obs.shape[1:] != self.model.observation_space.shape:
            raise ValueError(f"model {self.path} expects observations of shape "
                             f"{self.model.observation_space.shape}, the rules "
                             f"{sub.rules} give {obs.shape[1:]}")
        policy = self.model.policy
        with torch.no_grad():
            tensor, _ = policy.obs_to_tensor(obs)
            probs = policy.get_distribution(tensor, action_masks=masks).distribution.probs
        probs = probs.cpu().numpy().astype(np.float64) * masks  # exact zeros off the mask
        if self.deterministic:
            return probs.argmax(axis=1)
        cumulative = probs.cumsum(axis=1)
        draws = self.rng.random(len(rows)) * cumulative[:, -1]
        # the first action whose cumulative probability exceeds the draw: always a legal one
        return (cumulative <= draws[:, None]).sum(axis=1)


def load_model(path: Path, default: bool = False):
    """Load a MaskablePPO checkpoint on the CPU; ``ValueError`` / ``FileNotFoundError`` with
    a one-line reason if it is missing, unreadable or built for other observations."""
    if not path.is_file():
        hint = " (no model has been shipped yet: pass ppo:PATH)" if default else ""
        raise FileNotFoundError(f"no model file at {path}{hint}")
    from sb3_contrib import MaskablePPO

    try:
        model = MaskablePPO.load(path, device="cpu")
    except Exception as e:  # zip, pickle and torch errors alike mean "not a usable model"
        raise ValueError(f"cannot load {path} as a MaskablePPO checkpoint "
                         f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
                         ) from e
    expected = layout(get_rules("default")).space.shape
    if model.observation_space.shape != expected:
        raise ValueError(f"{path} was trained on observations of shape "
                         f"{model.observation_space.shape}, this environment gives {expected}")
    return model
