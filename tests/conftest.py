"""Shared fixtures: the recorded games of ``tests/data/vectors``, and one local Ray.

Each file holds recorded games with the full state after every move, one JSON object a
line, compressed with xz (the format is described in ``tests/data/vectors/README.md``).
"""

from __future__ import annotations

import json
import lzma
from pathlib import Path
from typing import Any

import pytest

VECTORS_DIR = Path(__file__).resolve().parent / "data" / "vectors"


def load_vectors(name: str) -> list[dict[str, Any]]:
    """The recorded games of one vectors file (``default-public.jsonl``, read from its
    ``.xz``); fails loudly if the file is missing."""
    path = VECTORS_DIR / f"{name}.xz"
    if not path.is_file():
        pytest.fail(f"test vectors not found at {path}: they are part of the repository "
                    "(tests/data/vectors); restore them with git checkout")
    with lzma.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope="session")
def local_ray():
    """One local Ray for the whole session, for the tests that need Ray (starting it takes
    seconds). Once: Ray keeps the envs registered with Tune (``patchwork``) only in the
    first Ray a process starts after the registration."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
