"""Command-line plumbing shared by ``evaluate.py``, ``train.py`` and ``patchwork-play``.

Bad input ends a command with one line naming the problem and exit status 2, before any
game is played and before anything is written (:func:`fail`; a bad command line itself:
:class:`~patchwork_env.training.cli.ArgumentParser`, the parser of every program here).
"""

from __future__ import annotations

import sys
import textwrap
from typing import NoReturn

from patchwork_env.agents import SPECS, Agent, AgentSpecError, make
from patchwork_env.data.rules import PRESETS
from patchwork_env.training.cli import ArgumentParser

HELP_WIDTH = 88
"""Columns the listing of :func:`specs_help` wraps at."""


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


def specs_help() -> str:
    """The agent specs (:data:`patchwork_env.agents.SPECS`) and rules presets, for the end
    of a ``--help`` text."""
    width = max(len(spec.usage) for spec in SPECS)
    lines = ["agent specs (AGENT):"]
    for spec in SPECS:
        lines += textwrap.wrap(spec.help, HELP_WIDTH, initial_indent=f"  {spec.usage:<{width}}  ",
                               subsequent_indent=" " * (width + 4))
    lines.append("rules presets (--rules):")
    for name, rules in PRESETS.items():
        spaces = ", ".join(map(str, rules.leather_positions))
        lines.append(f"  {name:<{width}}  leather patches on spaces {spaces}")
    return "\n".join(lines)


__all__ = ["ArgumentParser", "build_agent", "check_rules", "fail", "specs_help"]
