"""Output folders: create one and check it can be written, leaving nothing behind when a
program refuses to start.

A program that writes a folder checks it before any work, and a refused or failed start
removes the folders it created, so the file system is left as it was found.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterable
from pathlib import Path


class FolderError(ValueError):
    """An output folder that cannot be created or written; the message is one line."""


def _reason(e: OSError) -> str:
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
        raise FolderError(f"cannot create the folder {path}: {_reason(e)}") from None
    return missing


def remove_folders(folders: Iterable[Path]) -> None:
    """Remove the given folders, deepest first, where they are (still) empty."""
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()


def check_folder(path: Path) -> None:
    """Check that ``path`` is, or can be made, a folder this process may write in, leaving
    the file system as it was; :class:`FolderError` with a one-line reason if not."""
    created = make_folder(path)
    try:
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as e:
        raise FolderError(f"cannot write in the folder {path}: {_reason(e)}") from None
    finally:
        remove_folders(created)


def existing(folder: Path, names: Iterable[str]) -> list[str]:
    """Those of ``names`` that exist in ``folder``."""
    return [name for name in names if (Path(folder) / name).exists()]
