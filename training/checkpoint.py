"""Checkpoints: one file per run, written atomically and verified when read.

The file is a short header (a magic line and the SHA-256 of the payload) followed by a
``torch.save`` payload. Writing goes to a temporary file in the same folder which then
replaces the checkpoint in one rename, so a run killed mid-write leaves the previous
checkpoint intact; reading checks the magic, the digest and the format version before
anything is unpickled (and unpickles tensors and plain containers only).
"""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path
from typing import Any

import torch

MAGIC = b"patchwork-env checkpoint\n"
FORMAT_VERSION = 1


class CheckpointError(Exception):
    """A checkpoint that is missing, damaged or made for another setup."""


def save_checkpoint(path: str | Path, state: dict[str, Any]) -> None:
    """Write ``state`` (tensors, numbers, strings and containers of them) to ``path``."""
    path = Path(path)
    buf = io.BytesIO()
    torch.save({"format_version": FORMAT_VERSION, **state}, buf)
    payload = buf.getvalue()
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


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
