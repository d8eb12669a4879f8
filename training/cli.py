"""A dataclass as a command line: one ``--flag`` per field, its help the field's docstring.

``train.py`` keeps its options in one dataclass with a docstring under each field (as a
reader of the script sees them); this module turns that dataclass into an argument parser
whose errors are one line with exit status 2. The checks of the values are in :mod:`.checks`
(its :func:`check_types` and :func:`flag` are re-exported here for the scripts).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import itertools
import math
from typing import Any

from patchwork_env.training.checks import check_types, flag


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of a dataclass (read from its source)."""
    body = ast.parse(inspect.getsource(cls)).body[0].body  # type: ignore[attr-defined]
    docs = {}
    for node, following in itertools.pairwise(body):
        if (isinstance(node, ast.AnnAssign) and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)):
            docs[node.target.id] = " ".join(str(following.value.value).split())
    return docs


class ArgumentParser(argparse.ArgumentParser):
    """Reports a bad command line in one line, exit status 2, named by its program (the
    first word of ``prog``: ``train.py --algo ppo`` errors as ``train.py``)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog.split()[0]}: error: {message} (see --help)\n")


class _Switch(argparse.BooleanOptionalAction):
    """``--name`` / ``--no-name`` with exactly the help given (some Python versions append
    their own default to it)."""

    def __init__(self, *args: Any, help: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, help=help, **kwargs)
        self.help = help


def integer(text: str) -> int:
    """An int from the command line: ``100000``, ``100_000`` or ``1e5`` (a whole number)."""
    try:
        return int(text)
    except ValueError:
        value = float(text)  # a ValueError here is argparse's "invalid int value"
        if not math.isfinite(value) or value != int(value):
            raise ValueError(text) from None
        return int(value)


integer.__name__ = "int"  # argparse names the type in its message


def dataclass_parser(cls: type, prog: str, description: str) -> ArgumentParser:
    """A parser with a flag for each field of the dataclass ``cls``: ``--name VALUE`` of
    the field's type, or ``--name`` / ``--no-name`` for a bool; each help ends with the
    field's default."""
    parser = ArgumentParser(prog=prog, description=description,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    docs = field_docs(cls)
    for f in dataclasses.fields(cls):
        kind = type(f.default)
        if kind is bool:
            default = f"--{flag(f.name)}" if f.default else f"--no-{flag(f.name)}"
            parser.add_argument(f"--{flag(f.name)}", action=_Switch, default=f.default,
                                help=f"{docs[f.name]} (default: {default})")
        else:
            default = f" (default: {f.default})" if f.default != "" else ""
            parser.add_argument(f"--{flag(f.name)}", type=integer if kind is int else kind,
                                default=f.default, metavar=kind.__name__.upper(),
                                help=docs[f.name] + default)
    return parser


def given_fields(cls: type, args: argparse.Namespace) -> set[str]:
    """The fields whose value on the command line differs from their default."""
    return {f.name for f in dataclasses.fields(cls) if getattr(args, f.name) != f.default}


__all__ = ["ArgumentParser", "check_types", "dataclass_parser", "field_docs", "flag",
           "given_fields", "integer"]
