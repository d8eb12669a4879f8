"""Command-line plumbing shared by ``evaluate.py``, ``train.py`` and ``patchwork-play``.

Bad input ends a command with one line naming the problem and exit status 2, before any
game is played and before anything is written. The folder helpers check that an output
folder can be created and written without leaving it behind, so a refused command leaves
the file system as it found it.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from patchwork_env.agents import Agent, AgentSpecError, make
from patchwork_env.data.rules import PRESETS

AGENT_SPECS = (
    ("random", "uniform over the legal moves"),
    ("greedy", "the best move one step ahead (patch value and quilt shape)"),
    ("mcts[:N|:Ss]", "tree search: N simulations per move (default 400) or S seconds"),
    ("ppo[:PATH]", "a trained policy (.pt or .zip; default: the shipped one)"),
    ("ppo-sample[:PATH]", "the same, sampling its moves instead of the likeliest"),
    ("az[:PATH][:SIMS]", "a search-guided network with at most SIMS network evaluations per "
                         "move (default 32; default network: the shipped one)"),
    ("az-playouts[:PATH][:SIMS]", "the same search, each leaf valued by the network and 4 "
                                  "random playouts together"),
    ("az-policy[:PATH]", "the same network without search: its most likely move"),
)
"""The agent specs a command line accepts (``human`` plays only in ``patchwork-play``)."""


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


def specs_help() -> str:
    """The agent specs and rules presets, for the end of a ``--help`` text."""
    width = max(len(spec) for spec, _ in AGENT_SPECS)
    lines = ["agent specs (AGENT):"]
    lines += [f"  {spec:<{width}}  {text}" for spec, text in AGENT_SPECS]
    lines.append("rules presets (--rules):")
    for name, rules in PRESETS.items():
        spaces = ", ".join(map(str, rules.leather_positions))
        lines.append(f"  {name:<{width}}  leather patches on spaces {spaces}")
    return "\n".join(lines)
