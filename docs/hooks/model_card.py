"""MkDocs hook: the Models page is the model card, ``models/README.md``.

The card lives beside the files it describes, with links that work from there (the
pictures as ``../docs/NAME.png``, pages as ``../docs/PAGE.md``). A page whose only content
is an include marker, ``<!-- include: models/README.md -->``, gets the named file in its
place, with those links made relative to the documentation folder, so the card is written
once and read in both places.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
"""The repository root, where include paths start."""
MARKER = re.compile(r"<!-- include: ([\w./-]+) -->")


def include(markdown: str, root: Path = ROOT) -> str:
    """``markdown`` with each include marker replaced by the file it names, whose links
    into ``docs/`` are made relative to ``docs/``; a missing file raises ``ValueError``."""

    def text_of(match: re.Match[str]) -> str:
        path = root / match.group(1)
        if not path.is_file():
            raise ValueError(f"include: no file {match.group(1)}")
        return path.read_text().replace("](../docs/", "](")

    return MARKER.sub(text_of, markdown)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """MkDocs entry point: expand the include markers of every page."""
    return include(markdown)
