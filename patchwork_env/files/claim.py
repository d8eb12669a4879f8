"""A program's claim on the folder it writes: checked before any work, exclusive while the
program runs, and leaving nothing behind when the program refuses to start or fails.

:func:`claim` creates the folder (and its missing parents), refuses one that holds another
run's files unless ``overwrite`` is given, refuses one that cannot be created or written,
and takes an exclusive lock on the file :data:`LOCK_FILE` in it, so a second program
started on the same folder refuses at once. The lock is held until :meth:`Claim.release`
(a claim is a context manager): then the lock file is deleted and the folders the claim
created are removed where the program left them empty. Once locked, the hidden
temporaries of atomic writes that a killed program left there are deleted
(:func:`~patchwork_env.files.atomic.remove_leftovers`). Every refusal is one
:class:`~patchwork_env.files.folders.FolderError` line naming the folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from patchwork_env.files.atomic import remove_leftovers
from patchwork_env.files.folders import FolderError, make_folder, reason, remove_folders

LOCK_FILE = ".lock"
"""The file in a claimed folder whose lock marks the folder as in use."""


class Claim:
    """A folder claimed by this process: :attr:`folder`, held until :meth:`release`."""

    def __init__(self, folder: Path, created: list[Path], lock: int) -> None:
        self.folder = folder
        self.created = created
        self._lock: int | None = lock

    @property
    def held(self) -> bool:
        """Whether the claim still holds its lock."""
        return self._lock is not None

    def release(self) -> None:
        """Drop the lock, delete the lock file and remove the folders the claim created
        where they are empty (a run that wrote nothing leaves nothing). Idempotent."""
        if self._lock is None:
            return
        # Unlinked before it is unlocked: a program that opened the old file then finds it
        # is no longer the folder's lock file (see _lock).
        with contextlib.suppress(OSError):
            os.unlink(self.folder / LOCK_FILE)
        os.close(self._lock)  # closing drops the lock
        self._lock = None
        remove_folders(self.created)

    def __enter__(self) -> Path:
        return self.folder

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"Claim({str(self.folder)!r}, held={self.held})"


def _lock(folder: Path) -> int:
    """An open descriptor of ``folder``'s lock file, locked exclusively by this process."""
    path = folder / LOCK_FILE
    for _ in range(10):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise FolderError(f"cannot write in the folder {folder}: {reason(e)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise FolderError(f"the folder {folder} is in use by another program (it holds "
                              f"the lock on {path}): wait for it to end, or choose another "
                              "folder") from None
        try:
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)  # the holder released the folder between our open and our lock: again
    raise FolderError(f"the folder {folder} is being claimed by other programs: try again")


def claim(folder: Path | str, *, overwrite: bool = False,
          contents: Callable[[Path], list[str]] | None = None, what: str = "another run",
          advice: str = "choose another folder") -> Claim:
    """Claim ``folder`` for this program: create it, check it can be written and lock it.

    ``contents(folder)`` names the files of another run found there (``None``: the folder
    may hold anything, e.g. a run being resumed); unless ``overwrite`` is true, any makes
    the claim fail with ``"{folder} already holds {what} ({files}): {advice}"``. Any
    refusal raises :class:`FolderError` (one line) and leaves the file system as it was.
    """
    folder = Path(folder)
    if contents is not None and not overwrite and folder.is_dir():
        _refuse_a_run(folder, contents, what, advice)  # before touching anything
    created = make_folder(folder)
    try:
        taken = Claim(folder, created, _lock(folder))
    except BaseException:
        remove_folders(created)
        raise
    if contents is not None and not overwrite:
        try:  # again under the lock: another program may have written there meanwhile
            _refuse_a_run(folder, contents, what, advice)
        except BaseException:
            taken.release()
            raise
    remove_leftovers(folder)  # no write can be under way: the folder is ours
    return taken


def _refuse_a_run(folder: Path, contents: Callable[[Path], list[str]], what: str,
                  advice: str) -> None:
    found = contents(folder)
    if found:
        raise FolderError(f"{folder} already holds {what} ({', '.join(found)}): {advice}")


__all__ = ["LOCK_FILE", "Claim", "FolderError", "claim"]
