"""The test suite. :data:`ROOT` is the repository the tests run from: every file a test
reads lies inside it, so a fresh clone passes on its own."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The repository's root (the folder holding ``tests/``)."""
