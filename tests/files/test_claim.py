"""Claiming an output folder: refused while another program holds it, when it cannot be
created or written, or when it holds another run; a refused or ended claim leaves nothing
behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from patchwork_env.files.claim import LOCK_FILE, claim
from patchwork_env.files.folders import FolderError


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_held_folder_is_refused_until_released(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    first = claim(folder)
    with pytest.raises(FolderError, match=f"the folder {folder} is in use") as refused:
        claim(folder, overwrite=True)
    assert "\n" not in str(refused.value)
    assert first.held and (folder / LOCK_FILE).exists()
    first.release()
    assert not first.held
    with claim(folder) as again:  # free once released
        assert again == folder


def test_another_process_is_refused_while_the_folder_is_held(tmp_path: Path) -> None:
    script = ("import sys; from patchwork_env.files.claim import claim\n"
              "try:\n    claim(sys.argv[1])\nexcept ValueError as e:\n    print(e)")
    with claim(tmp_path / "run"):
        done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "run")],
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"{tmp_path / 'run'} is in use by another program" in done.stdout


def test_a_released_claim_leaves_nothing_but_what_the_run_wrote(tmp_path: Path) -> None:
    with claim(tmp_path / "a" / "b" / "c"):
        assert (tmp_path / "a" / "b" / "c" / LOCK_FILE).exists()
    assert files_under(tmp_path) == []  # the folders it made were empty: removed
    with pytest.raises(RuntimeError), claim(tmp_path / "a" / "b"):
        raise RuntimeError("the run failed before writing anything")
    assert files_under(tmp_path) == []
    with claim(tmp_path / "a" / "b") as folder:
        (folder / "results.json").write_text("{}")
    assert files_under(tmp_path) == ["a", "a/b", "a/b/results.json"]


def test_a_folder_that_cannot_be_made_or_written_is_refused(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    with pytest.raises(FolderError, match=r"cannot create the folder .*afile/run"):
        claim(tmp_path / "afile" / "run" / "deeper")
    with pytest.raises(FolderError, match="afile is a file, not a folder"):
        claim(tmp_path / "afile")
    assert files_under(tmp_path) == ["afile"]
    if Path("/proc/self").is_dir():  # a folder nobody may write in, whoever runs the tests
        with pytest.raises(FolderError, match=r"cannot (write in|create) the folder /proc"):
            claim("/proc/self")


def test_a_folder_holding_another_run_is_refused_unless_overwriting(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text("{}")
    found = lambda folder: [p.name for p in folder.glob("*.json")]  # noqa: E731
    with pytest.raises(FolderError, match=r"already holds results \(results.json\): pick"):
        claim(tmp_path, contents=found, what="results", advice="pick another")
    assert files_under(tmp_path) == ["results.json"]  # untouched: no lock file either
    with claim(tmp_path, contents=found, overwrite=True):
        pass
    assert files_under(tmp_path) == ["results.json"]
