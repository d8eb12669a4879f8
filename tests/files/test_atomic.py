"""Atomic writes: a file is replaced whole or not at all, a full disk is one line naming the
file, nothing temporary is left behind, and a group of files is written all or none."""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

import pytest

from patchwork_env.files import atomic
from patchwork_env.files.atomic import (
    WriteError,
    atomic_open,
    atomic_path,
    remove_leftovers,
    save_figure,
    together,
    torch_save,
    write_bytes,
    write_text,
)
from patchwork_env.files.claim import claim
from tests.files.faults import disk_full, fill_disk_on


def names(folder: Path) -> list[str]:
    """Everything in ``folder``, hidden entries too."""
    return sorted(os.listdir(folder))


def test_a_write_replaces_the_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    write_text(target, "first")
    write_text(target, "second, longer")
    assert target.read_text() == "second, longer"
    write_bytes(tmp_path / "data.bin", b"\x00\xff")
    assert (tmp_path / "data.bin").read_bytes() == b"\x00\xff"
    assert names(tmp_path) == ["data.bin", "notes.txt"]


def test_nothing_is_visible_under_the_name_until_the_block_ends(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    write_text(target, "old")
    with atomic_open(target, "w") as f:
        f.write("new")
        f.flush()
        assert target.read_text() == "old"
    assert target.read_text() == "new"


@pytest.mark.parametrize("where", ["write", "fsync", "replace"])
def test_a_full_disk_is_one_line_naming_the_file_and_keeps_the_old_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    target = tmp_path / "checkpoint.pt"
    write_bytes(target, b"the earlier checkpoint")
    if where == "write":
        with pytest.raises(WriteError) as error, atomic_open(target, "wb") as f:
            f.write(b"half of it")
            disk_full()
    else:
        monkeypatch.setattr(atomic.os, where, disk_full)
        with pytest.raises(WriteError) as error:
            write_bytes(target, b"the new checkpoint")
        monkeypatch.undo()
    message = str(error.value)
    assert message == f"cannot write {target}: No space left on device"
    assert "\n" not in message and error.value.errno == errno.ENOSPC
    assert target.read_bytes() == b"the earlier checkpoint"
    assert names(tmp_path) == ["checkpoint.pt"]  # no temporary left


def test_another_error_goes_on_unchanged_and_leaves_no_temporary(tmp_path: Path) -> None:
    with pytest.raises(KeyError), atomic_open(tmp_path / "a.csv") as f:
        f.write("x")
        raise KeyError("a bug in the writer")
    with pytest.raises(KeyboardInterrupt), atomic_open(tmp_path / "b.csv") as f:
        raise KeyboardInterrupt
    assert names(tmp_path) == []


def test_a_folder_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(WriteError, match=re.escape(f"cannot write {tmp_path / 'no' / 'x.txt'}: ")):
        write_text(tmp_path / "no" / "x.txt", "text")
    with pytest.raises(WriteError) as error, atomic_path(tmp_path / "outer.pt"):
        write_text(tmp_path / "no" / "inner.txt", "text")
    assert str(error.value).startswith(f"cannot write {tmp_path / 'no' / 'inner.txt'}: ")
    assert "outer.pt" not in str(error.value) and names(tmp_path) == []
    with pytest.raises(ValueError, match="mode 'w' or 'wb', got 'a'"), \
            atomic_open(tmp_path / "x.txt", "a"):
        pass


def test_pictures_and_tensors_are_written_whole(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import torch

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    save_figure(fig, tmp_path / "curve.png", dpi=50)
    assert (tmp_path / "curve.png").read_bytes()[:4] == b"\x89PNG"
    torch_save({"w": torch.ones(3)}, tmp_path / "net.pt")
    assert torch.equal(torch.load(tmp_path / "net.pt")["w"], torch.ones(3))

    fill_disk_on(monkeypatch, "curve.png")
    with pytest.raises(WriteError, match=r"curve\.png: No space left on device"):
        save_figure(fig, tmp_path / "curve.png", dpi=80)
    monkeypatch.undo()
    plt.close(fig)
    assert (tmp_path / "curve.png").read_bytes()[:4] == b"\x89PNG"
    assert names(tmp_path) == ["curve.png", "net.pt"]


def test_files_written_together_appear_all_or_none(tmp_path: Path) -> None:
    write_text(tmp_path / "a.json", "old a")
    write_text(tmp_path / "b.csv", "old b")
    with pytest.raises(WriteError, match=r"c\.png"), together():
        write_text(tmp_path / "a.json", "new a")
        write_text(tmp_path / "b.csv", "new b")
        assert (tmp_path / "a.json").read_text() == "old a"  # not yet
        with atomic_open(tmp_path / "c.png", "wb") as f:
            f.write(b"part")
            disk_full()
    assert [(tmp_path / n).read_text() for n in ("a.json", "b.csv")] == ["old a", "old b"]
    assert names(tmp_path) == ["a.json", "b.csv"]

    with together():
        write_text(tmp_path / "a.json", "new a")
        write_text(tmp_path / "c.txt", "new c")
    assert [(tmp_path / n).read_text() for n in ("a.json", "b.csv", "c.txt")] == [
        "new a", "old b", "new c"]
    assert names(tmp_path) == ["a.json", "b.csv", "c.txt"]
    with pytest.raises(RuntimeError, match="do not nest"), together(), together():
        pass


def test_the_next_claim_removes_what_a_killed_write_left(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / ".writing-abcd1234.tmp").mkdir()
    (folder / ".writing-abcd1234.tmp" / "checkpoint.pt").write_bytes(b"half")
    (folder / ".mine.tmp").write_text("the user's")  # not one of ours: kept
    (folder / "notes.txt").write_text("the user's")
    with claim(folder):
        assert ".writing-abcd1234.tmp" not in names(folder)
    assert names(folder) == [".mine.tmp", "notes.txt"]
    assert remove_leftovers(folder) == []
