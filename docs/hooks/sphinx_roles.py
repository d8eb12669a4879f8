"""Griffe extension: show the docstrings' Sphinx roles as code in the API reference.

The docstrings name other objects the Sphinx way (``:class:`~patchwork_env.Game```,
``:func:`.heuristic.best_placement```), which Markdown would print with the role's name.
This extension rewrites each role to a code span of the name as a reader would write it
(the last part for ``~``, without a leading dot), so the pages read as the source does.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?[a-z]+:`(~?)\.?([^`]+)`")


def plain(text: str) -> str:
    """``text`` with every Sphinx role replaced by a code span of the name it gives."""

    def code(match: re.Match[str]) -> str:
        name = match.group(2)
        return f"`{name.rsplit('.', 1)[-1] if match.group(1) else name}`"

    return ROLE.sub(code, text)


class SphinxRoles(griffe.Extension):
    """Rewrites the roles of every docstring griffe loads."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Griffe entry point, once per loaded object."""
        if obj.docstring is not None:
            obj.docstring.value = plain(obj.docstring.value)
