"""Command-line plumbing shared by ``evaluate.py`` and ``patchwork-play`` (:mod:`.play`).

Bad input ends a command with one line naming the problem and exit status 2, before any
game is played.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from patchwork_env.rules import PRESETS

from . import Agent, AgentSpecError, make


class ArgumentParser(argparse.ArgumentParser):
    """An ``argparse`` parser whose errors are one line (no usage dump) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        fail(f"{self.prog}: {message}")


def fail(message: str) -> NoReturn:
    """Print ``error: message`` on stderr and exit with status 2."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def check_rules(name: str) -> str:
    """``name`` if it is a rules preset, else a one-line exit."""
    if name not in PRESETS:
        fail(f"unknown rules preset {name!r}: choose from {', '.join(sorted(PRESETS))}")
    return name


def build_agent(spec: str, seed: int | None) -> Agent:
    """``agents.make(spec, seed)``, or a one-line exit naming what is wrong with ``spec``."""
    try:
        return make(spec, seed)
    except AgentSpecError as e:
        fail(str(e))
