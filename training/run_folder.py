"""The run folder: what a run writes there, and how a new run claims a folder.

A new run never replaces another run's files unless asked: :func:`claim` refuses a folder
that holds any of :data:`RUN_FILES` (or TensorBoard logs) unless ``--overwrite`` is given,
and checks that the folder can be created and written before anything else happens. The
folders it had to create are removed again if the run stops before writing its first
checkpoint, so a refused or failed start leaves nothing behind. With ``--overwrite`` the
old run's files are deleted by :func:`clear` only once the new run has done its warm
start, right before its first checkpoint: a run stopped before that leaves the old one
intact.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from patchwork_env.files.folders import FolderError, make_folder, remove_folders

RUN_FILES = ("checkpoint.pt", "best.pt", "best.zip", "final.pt", "final.zip", "metrics.csv",
             "learning_curve.png")
"""The files a run writes in its folder (``tb/`` holds its TensorBoard logs)."""
TB_FOLDER = "tb"
TB_PATTERN = "events.out.tfevents.*"
LEFTOVERS = ("checkpoint.pt.tmp", "best.tmp.zip", "final.tmp.zip")
"""Temporary files of an interrupted atomic write."""


class RunFolderError(Exception):
    """A run folder that cannot be used as asked; the message is one line."""


def run_files(folder: Path) -> list[str]:
    """The files of a training run found in ``folder`` (``tb/`` for TensorBoard logs)."""
    folder = Path(folder)
    found = [name for name in RUN_FILES if (folder / name).exists()]
    if any((folder / TB_FOLDER).glob(TB_PATTERN)):
        found.append(f"{TB_FOLDER}/")
    return found


def check_writable(folder: Path) -> None:
    """:class:`RunFolderError` unless a file can be created in the existing ``folder``."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        raise RunFolderError(f"cannot write in the run folder {folder}: "
                             f"{e.strerror or e}") from None


def claim(folder: Path, overwrite: bool) -> list[Path]:
    """Make ``folder`` ready for a new run; the folders this created (to :func:`release`
    if the run stops before it has written anything).

    :class:`RunFolderError` if it holds a run and ``overwrite`` is false, or if it cannot
    be created or written; nothing is left behind then.
    """
    folder = Path(folder)
    found = run_files(folder) if folder.is_dir() else []
    if found and not overwrite:
        raise RunFolderError(f"{folder} already holds a training run ({', '.join(found)}): "
                             f"continue it with --resume {folder}, or replace it with "
                             "--overwrite")
    try:
        created = make_folder(folder)
    except FolderError as e:
        raise RunFolderError(f"run folder: {e}") from None
    try:
        check_writable(folder)
    except RunFolderError:
        remove_folders(created)
        raise
    return created


def release(created: list[Path]) -> None:
    """Remove the folders :func:`claim` created, where nothing was written in them."""
    remove_folders(created)


def clear(folder: Path) -> list[str]:
    """Delete the files of the run in ``folder`` (and nothing else there); their names."""
    folder = Path(folder)
    removed = run_files(folder)
    for name in (*RUN_FILES, *LEFTOVERS):
        (folder / name).unlink(missing_ok=True)
    for log in (folder / TB_FOLDER).glob(TB_PATTERN):
        log.unlink()
    remove_folders([folder / TB_FOLDER])
    return removed
