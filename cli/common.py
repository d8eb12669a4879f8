"""Command-line plumbing shared by ``evaluate.py``, ``train.py`` and ``patchwork-play``.

Bad input ends a command with one line naming the problem and exit status 2, before any
game is played and before anything is written (:func:`fail`; a bad command line itself:
:class:`~patchwork_env.training.cli.ArgumentParser`, the parser of every program here).
"""

from __future__ import annotations

import sys
import textwrap
from typing import NoReturn

from patchwork_env.agents import DEVICE_AGENTS, SPECS, Agent, AgentSpecError, make
from patchwork_env.agents.device import DEVICE_CHOICES
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


def check_device(name: str) -> str:
    """``name`` if this machine has that device (``cpu`` always), else a one-line exit naming
    it and the choices (:func:`~patchwork_env.agents.device.resolve_device`)."""
    if name != "cpu":  # the check imports torch, which the CPU needs not
        from patchwork_env.agents.device import DeviceError, resolve_device

        try:
            resolve_device(name)
        except DeviceError as e:
            fail(str(e))
    return name


def build_agent(spec: str, seed: int | None, device: str | None = None,
                game: str = "patchwork") -> Agent:
    """``agents.make(spec, seed, device, game=game)``, or a one-line exit naming what is
    wrong with ``spec`` (and the game, where it is not Patchwork)."""
    try:
        return make(spec, seed, device, game=game)
    except AgentSpecError as e:
        fail(str(e) if game == "patchwork" else f"{e} (--game {game})")


def specs_help() -> str:
    """The agent specs (:data:`patchwork_env.agents.SPECS`) and rules presets, for the end
    of a ``--help`` text."""
    width = max(len(spec.usage) for spec in SPECS)
    lines = ["agent specs (AGENT):"]
    for spec in SPECS:
        lines += textwrap.wrap(spec.help, HELP_WIDTH, initial_indent=f"  {spec.usage:<{width}}  ",
                               subsequent_indent=" " * (width + 4))
    networks = f"{', '.join(DEVICE_AGENTS[:-1])} and {DEVICE_AGENTS[-1]}"
    lines += textwrap.wrap(f"the specs of {networks} may end with @DEVICE, where the network "
                           f"runs: {DEVICE_CHOICES} (az:64@cuda:1; default: the CPU, or the "
                           "program's --device)", HELP_WIDTH,
                           initial_indent=f"  {'AGENT@DEVICE':<{width}}  ",
                           subsequent_indent=" " * (width + 4))
    lines.append("rules presets (--rules):")
    for name, rules in PRESETS.items():
        spaces = ", ".join(map(str, rules.leather_positions))
        lines.append(f"  {name:<{width}}  leather patches on spaces {spaces}")
    return "\n".join(lines)


__all__ = ["ArgumentParser", "build_agent", "check_device", "check_rules", "fail",
           "specs_help"]
