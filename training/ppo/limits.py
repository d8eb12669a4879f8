"""What a run's options ask of the machine, checked before the run starts.

The largest arrays of a run are the rollout buffer (every observation and legal mask of
one rollout, ``n_envs * n_steps`` learner moves, stored as float32 and copied once when an
update reads it) and the teacher's demonstrations (every observation as float32 and every
legal mask as bool, gathered in lists and then joined into one array). Options whose
arrays would not fit into this machine's memory are refused with the figure, rather than
failing minutes later with an out-of-memory kill.
"""

from __future__ import annotations

import os

from patchwork_env.data.actions import N_ACTIONS
from patchwork_env.data.rules import get_rules
from patchwork_env.views.observation import layout

OBS_SIZE = int(layout(get_rules("default")).space.shape[0])
ROLLOUT_BYTES_PER_MOVE = 2 * (4 * (OBS_SIZE + N_ACTIONS) + 4 * 8)
"""One learner move in the rollout buffer: float32 observation, float32 mask and eight
float32 scalars (action, reward, value, ...), twice (SB3 copies the buffer to read it)."""
DEMO_BYTES_PER_POSITION = 2 * (4 * OBS_SIZE + N_ACTIONS + 8 * 3)
"""One demonstration position: float32 observation, bool mask, action, seat and game id,
twice (the lists and the joined arrays)."""


def physical_memory() -> int | None:
    """This machine's memory in bytes, or None where it cannot be told."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        return None


def gigabytes(n: float) -> str:
    """``12.3 GB``."""
    return f"{n / 1e9:,.1f} GB"


def check_memory(n_envs: int, n_steps: int, imitation_positions: int,
                 available: int | None = None) -> None:
    """``ValueError`` naming the options whose arrays would need more than the machine's
    memory (``available`` bytes; by default :func:`physical_memory`)."""
    available = physical_memory() if available is None else available
    if available is None:
        return
    rollout = n_envs * n_steps * ROLLOUT_BYTES_PER_MOVE
    if rollout > available:
        raise ValueError(f"--n-envs {n_envs} x --n-steps {n_steps} = {n_envs * n_steps:,} "
                         f"moves per rollout would need about {gigabytes(rollout)} of "
                         f"memory; this machine has {gigabytes(available)}")
    demos = imitation_positions * DEMO_BYTES_PER_POSITION
    if demos > available:
        raise ValueError(f"--imitation-positions {imitation_positions:,} would need about "
                         f"{gigabytes(demos)} of memory; this machine has "
                         f"{gigabytes(available)}")
