"""Faults for the tests of files: a disk that fills up part way through a file, and a
program run as ``python -c`` with a fault set up first."""

from __future__ import annotations

import errno
import os
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests import ROOT


def disk_full(*_: Any, **__: Any) -> Any:
    """Raise the error of a full disk."""
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class FillingFile:
    """A file whose disk fills up after its first few bytes."""

    def __init__(self, f: Any) -> None:
        self._f = f

    def write(self, data: Any) -> int:
        self._f.write(data[:10])
        self._f.flush()
        return disk_full()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)

    def __enter__(self) -> FillingFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._f.close()


def filling_open(real_open: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``open``, except that a file named ``name`` opened for writing fills the disk."""

    def open_(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        f = real_open(file, mode, *args, **kwargs)
        if isinstance(file, str | os.PathLike) and Path(file).name == name and "w" in mode:
            return FillingFile(f)
        return f

    return open_


def fill_disk_on(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Make every file named ``name`` opened for writing run out of disk space."""
    import builtins

    monkeypatch.setattr(builtins, "open", filling_open(builtins.open, name))


def python_running(script: str, before: str) -> list[str]:
    """The command ``python -c`` that runs the code ``before``, then the repository's
    ``script`` as the program it is (its command-line arguments follow)."""
    code = f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n" + textwrap.dedent(before) + (
        textwrap.dedent(f"""
        import runpy
        sys.argv[0] = {str(ROOT / script)!r}
        runpy.run_path({str(ROOT / script)!r}, run_name="__main__")
    """))
    return [sys.executable, "-c", code]
