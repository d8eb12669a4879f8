"""What a run saves: its checkpoint (to resume it) and its exported policies (to play them).

The checkpoint is one file per run, written atomically and verified when read: a short
header (a magic line and the SHA-256 of the payload) followed by a ``torch.save`` payload.
Writing is atomic (:mod:`patchwork_env.files.atomic`): a run killed mid-write, or one whose
disk is full, leaves the previous checkpoint intact and no temporary behind (a full disk is
a one-line :class:`~patchwork_env.files.atomic.WriteError` naming the file); reading checks
the magic, the digest and the format version before anything is unpickled (and unpickles
tensors and plain containers only).

:func:`export_policy` writes the learner twice: as a policy file (``.pt``, see
:mod:`patchwork_env.agents.model_file`: what ``ppo:PATH`` and ``--init`` read anywhere the
package is installed) and as a ``MaskablePPO`` zip for SB3's own tools.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any

import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from patchwork_env.agents.device import on_cpu
from patchwork_env.agents.model_file import save_policy
from patchwork_env.agents.ppo.networks import FastMaskablePolicy
from patchwork_env.files.atomic import atomic_path, write_bytes

MAGIC = b"patchwork-env checkpoint\n"
FORMAT_VERSION = 1


class CheckpointError(Exception):
    """A checkpoint that is missing, damaged or made for another setup."""


def save_checkpoint(path: str | Path, state: dict[str, Any]) -> None:
    """Write ``state`` (tensors, numbers, strings and containers of them) to ``path``,
    atomically, its tensors as CPU copies (a run trained on a GPU resumes anywhere);
    :class:`~patchwork_env.files.atomic.WriteError` if it cannot be written."""
    path = Path(path)
    buf = io.BytesIO()
    torch.save({"format_version": FORMAT_VERSION, **on_cpu(state)}, buf)
    payload = buf.getvalue()
    write_bytes(path, MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """The state saved at ``path``; :class:`CheckpointError` if it cannot be trusted."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise CheckpointError(f"cannot read checkpoint {path}: {e.strerror}") from None
    if not data.startswith(MAGIC):
        raise CheckpointError(f"{path} is not a patchwork-env checkpoint")
    digest, sep, payload = data[len(MAGIC):].partition(b"\n")
    if not sep or hashlib.sha256(payload).hexdigest().encode() != digest:
        raise CheckpointError(f"checkpoint {path} is corrupt (its checksum does not match); "
                              "delete it to start the run afresh")
    try:
        state = torch.load(io.BytesIO(payload), map_location="cpu", weights_only=True)
    except Exception as e:  # the digest matched, so this is a file from another writer
        raise CheckpointError(f"checkpoint {path} cannot be read: {e}") from None
    version = state.get("format_version") if isinstance(state, dict) else None
    if version != FORMAT_VERSION:
        raise CheckpointError(f"checkpoint {path} has format version {version}, this version "
                              f"of train.py reads version {FORMAT_VERSION}")
    return state


def export_policy(model: MaskablePPO, folder: str | Path, name: str) -> tuple[Path, Path]:
    """Save ``model``'s policy as ``folder/name.pt`` (a policy file) and ``folder/name.zip``
    (``MaskablePPO.load``), each atomically and without optimiser state
    (:class:`~patchwork_env.files.atomic.WriteError` if one cannot be written).

    In the zip the MLP policy is saved as sb3-contrib's own class (it has the same
    weights), so ``MaskablePPO.load`` reads it without this package.
    """
    folder = Path(folder)
    policy_file = folder / f"{name}.pt"
    with atomic_path(policy_file) as tmp:  # a full disk: a WriteError, and no temporary left
        save_policy(model.policy, tmp)
    policy = model.policy
    optimizer, policy_class = policy.optimizer, model.policy_class
    policy.optimizer = type(optimizer)(policy.parameters(), **optimizer.defaults)
    if type(policy) is FastMaskablePolicy:
        model.policy_class = MaskableActorCriticPolicy
    try:
        with atomic_path(folder / f"{name}.zip") as tmp:
            model.save(tmp)
    finally:
        policy.optimizer, model.policy_class = optimizer, policy_class
    return policy_file, folder / f"{name}.zip"
