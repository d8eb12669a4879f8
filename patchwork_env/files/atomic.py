"""Atomic writes: every file a program of the project writes is either whole or untouched.

:func:`atomic_path` gives a temporary path of the same name in a hidden folder next to the
target (``.writing-XXXXXXXX.tmp/NAME``), :func:`atomic_open` a file opened there; when the
``with`` block ends normally the file is synced to disk and renamed over the target in one
step, so a reader never sees half a file and a program stopped mid-write leaves the
previous file as it was. When the block raises, the temporary is removed and the error goes
on; an ``OSError`` (a full disk, a folder that cannot be written) becomes a one-line
:class:`WriteError` naming the file.

:func:`together` makes several files one write: inside it, each file is written whole to its
temporary and only renamed into place when the block ends, all of them, so a failure half
way (a disk that fills up while the last picture is drawn) replaces none of the earlier
files. Renames need no room on the disk.

A program killed outright leaves at most a hidden temporary; the next claim of the folder
(:func:`patchwork_env.files.claim.claim`) deletes it (:func:`remove_leftovers`).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from patchwork_env.files.folders import reason

TEMPORARY = re.compile(r"^\.writing-[a-z0-9_]{8}\.tmp$")
"""The names of :func:`atomic_path`'s hidden temporary folders: ``.writing-XXXXXXXX.tmp``."""

_pending: contextvars.ContextVar[list[tuple[Path, Path]] | None] = contextvars.ContextVar(
    "pending_atomic_writes", default=None)


class WriteError(OSError):
    """A file that could not be written (the disk is full, the folder is read-only); the
    message is one line naming the file, and the file is as it was before."""

    def __init__(self, path: Path, error: OSError) -> None:
        super().__init__(f"cannot write {path}: {reason(error)}")
        self.errno = error.errno
        self.path = path


def remove_leftovers(folder: Path) -> list[str]:
    """Delete the temporaries of writes that a killed program left in ``folder``; their
    names. Call it only while holding the folder's claim (no write can be under way)."""
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if TEMPORARY.match(entry.name) and entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(entry.name)
    return removed


def _sync(path: Path) -> None:
    """Push ``path`` (a file, or a folder after a rename in it) to the disk; a folder the
    file system cannot sync is let be."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError:
        if not path.is_dir():
            raise
    finally:
        os.close(fd)


def _discard(tmp: Path) -> None:
    shutil.rmtree(tmp.parent, ignore_errors=True)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path for ``path`` to write (it has the same name, in a hidden folder
    next to it, so that tools that read the format from the name still do); when the block
    ends normally it is synced and renamed over ``path`` (or, inside :func:`together`, when
    that block ends). When the block raises, the temporary is removed; an ``OSError``
    becomes a :class:`WriteError` naming ``path``."""
    path = Path(path)
    tmp: Path | None = None
    handed_over = False  # renamed into place, or left to together()
    try:
        tmp = Path(tempfile.mkdtemp(prefix=".writing-", suffix=".tmp", dir=path.parent)
                   ) / path.name
        yield tmp
        _sync(tmp)
        pending = _pending.get()
        if pending is not None:
            pending.append((tmp, path))
            handed_over = True
            return
        os.replace(tmp, path)
        handed_over = True
        with contextlib.suppress(OSError):
            os.rmdir(tmp.parent)
            _sync(path.parent)
    except WriteError:
        raise  # of a file written inside the block: it names its own file
    except OSError as e:
        raise WriteError(path, e) from None
    finally:
        if tmp is not None and not handed_over:
            _discard(tmp)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", **kwargs: Any
                ) -> Iterator[IO[Any]]:
    """Open ``path`` for writing (``mode`` ``"w"`` or ``"wb"``, ``kwargs`` as for
    :func:`open`; text defaults to UTF-8) so that it is replaced whole when the block ends,
    or not at all (:func:`atomic_path`). :class:`WriteError` for an ``OSError``."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes a whole file: mode 'w' or 'wb', got {mode!r}")
    if "b" not in mode:
        kwargs.setdefault("encoding", "utf-8")
    with atomic_path(path) as tmp, open(tmp, mode, **kwargs) as f:
        yield f


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb") as f:
        f.write(data)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically, in UTF-8."""
    with atomic_open(path, "w") as f:
        f.write(text)


def save_figure(fig: Any, path: str | os.PathLike[str], **kwargs: Any) -> None:
    """``fig.savefig`` to ``path`` atomically (the format from the name's extension)."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, **kwargs)


def torch_save(obj: Any, path: str | os.PathLike[str]) -> None:
    """``torch.save(obj)`` to ``path`` atomically."""
    import torch

    with atomic_path(path) as tmp:
        torch.save(obj, tmp)


@contextlib.contextmanager
def together() -> Iterator[None]:
    """Write the files :func:`atomic_open` opens inside the block as one: each is written
    whole to its temporary, and all are renamed into place only when the block ends
    normally; when it raises, none is and every temporary is removed."""
    if _pending.get() is not None:
        raise RuntimeError("together() blocks do not nest")
    pending: list[tuple[Path, Path]] = []
    token = _pending.set(pending)
    try:
        yield
    except BaseException:
        _pending.reset(token)
        for tmp, _ in pending:
            _discard(tmp)
        raise
    _pending.reset(token)
    for i, (tmp, path) in enumerate(pending):
        try:
            os.replace(tmp, path)
        except OSError as e:
            for later, _ in pending[i:]:
                _discard(later)
            raise WriteError(path, e) from None
        _discard(tmp)
    for folder in {path.parent for _, path in pending}:
        with contextlib.suppress(OSError):
            _sync(folder)


__all__ = ["WriteError", "atomic_open", "atomic_path", "remove_leftovers", "save_figure",
           "together", "torch_save", "write_bytes", "write_text"]
