"""Shared fixtures: the recorded games of ``../shared/vectors``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

VECTORS_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "vectors"


def load_vectors(name: str) -> list[dict[str, Any]]:
    """The recorded games of one vectors file; fails loudly if the file is missing."""
    path = VECTORS_DIR / name
    if not path.is_file():
        pytest.fail(f"test vectors not found at {path}: the shared/ folder must sit beside "
                    "the repository root")
    with path.open() as f:
        return [json.loads(line) for line in f]
