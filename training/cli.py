"""A dataclass as a command line: one ``--flag`` per field, its help the field's docstring.

``train.py`` keeps its options in one dataclass with a docstring under each field (as a
reader of the script sees them); this module turns that dataclass into an argument parser
whose errors are one line with exit status 2.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import itertools


def flag(name: str) -> str:
    """The command-line flag of a field: ``total_steps`` -> ``total-steps``."""
    return name.replace("_", "-")


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
    """Reports a bad command line in one line, exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def dataclass_parser(cls: type, prog: str, description: str) -> ArgumentParser:
    """A parser with a flag for each field of the dataclass ``cls``: ``--name VALUE`` of
    the field's type, or ``--name`` / ``--no-name`` for a bool."""
    parser = ArgumentParser(prog=prog, description=description,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    docs = field_docs(cls)
    for f in dataclasses.fields(cls):
        kind = type(f.default)
        if kind is bool:  # --flag / --no-flag; argparse appends the default itself
            parser.add_argument(f"--{flag(f.name)}", action=argparse.BooleanOptionalAction,
                                default=f.default, help=docs[f.name])
        else:
            default = f" (default: {f.default})" if f.default != "" else ""
            parser.add_argument(f"--{flag(f.name)}", type=kind, default=f.default,
                                metavar=kind.__name__.upper(), help=docs[f.name] + default)
    return parser


def given_fields(cls: type, args: argparse.Namespace) -> set[str]:
    """The fields whose value on the command line differs from their default."""
    return {f.name for f in dataclasses.fields(cls) if getattr(args, f.name) != f.default}
