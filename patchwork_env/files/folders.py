"""Output folders: create one, remove the ones a program created, and the one error type of
everything about folders (:class:`FolderError`). A program claims its folder with
:func:`patchwork_env.files.claim.claim`, built on these.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path


class FolderError(ValueError):
    """A folder a program cannot use as asked: it cannot be created or written, holds
    another run, or is in use by another program. The message is one line."""


def reason(e: OSError) -> str:
    """The reason of an ``OSError`` in a few words (``Permission denied``)."""
    return e.strerror or str(e) or type(e).__name__


def make_folder(path: Path) -> list[Path]:
    """Create the folder ``path`` and its missing parents; the folders this created,
    deepest first (for :func:`remove_folders`). :class:`FolderError` if it cannot."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise FolderError(f"{path} is a file, not a folder")
    missing = []
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing.append(folder)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        remove_folders(missing)
        raise FolderError(f"cannot create the folder {path}: {reason(e)}") from None
    return missing


def remove_folders(folders: Iterable[Path]) -> None:
    """Remove the given folders, deepest first, where they are (still) empty."""
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()


def existing(folder: Path, names: Iterable[str]) -> list[str]:
    """Those of ``names`` that exist in ``folder``."""
    return [name for name in names if (Path(folder) / name).exists()]
