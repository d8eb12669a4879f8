"""Where the models shipped with the package live (package data of
``patchwork_env.models``), found without importing torch."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

PPO_MODEL = Path(str(resources.files("patchwork_env.models") / "ppo.pt"))
"""The policy file that ``ppo`` with no path plays."""
AZ_MODEL = Path(str(resources.files("patchwork_env.models") / "az.pt"))
"""The network file that ``az`` and ``az-policy`` with no path play."""
