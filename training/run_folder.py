"""The run folder of ``train.py``: what a run writes there, and how a run claims it.

:func:`run_files` finds the files of a run of either trainer (:data:`RUN_FILES`, and
TensorBoard logs): what a new run of either refuses to replace unless told to overwrite.
:func:`claim_run` claims the folder of a PPO run with
:func:`patchwork_env.files.claim.claim` before any work: a new run refuses a folder that
holds another run unless ``--overwrite`` is given, and a resumed run needs its checkpoint;
the folder is then locked for the life of the run. With ``--overwrite`` the old run's files
are deleted by :func:`clear` only once the new run has done its warm start, right before its
first checkpoint: a run stopped before that leaves the old one intact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from patchwork_env.files.claim import Claim, claim
from patchwork_env.files.folders import FolderError, existing, remove_folders
from patchwork_env.training.checkpoint import CheckpointError

CHECKPOINT = "checkpoint.pt"
RUN_FILES = (CHECKPOINT, "best.pt", "best.zip", "final.pt", "final.zip", "net.pt",
             "metrics.csv", "learning_curve.png")
"""The files a run of either trainer writes in its folder (``tb/`` holds its TensorBoard
logs): PPO's exported policies, the search-guided trainer's ``net.pt``, and both trainers'
checkpoint, records and curve."""
TB_FOLDER = "tb"
TB_PATTERN = "events.out.tfevents.*"
LEFTOVERS = ("checkpoint.pt.tmp", "best.tmp.zip", "final.tmp.zip", "best.pt.tmp",
             "final.pt.tmp", "net.pt.tmp")
"""Temporary files of writes that name their temporary after the file (the project's own
atomic writes use hidden folders that the claim removes: :mod:`patchwork_env.files.atomic`)."""


def run_files(folder: Path) -> list[str]:
    """The files of a training run found in ``folder`` (``tb/`` for TensorBoard logs)."""
    folder = Path(folder)
    found = existing(folder, RUN_FILES)
    if any((folder / TB_FOLDER).glob(TB_PATTERN)):
        found.append(f"{TB_FOLDER}/")
    return found


def claim_run(opts: Any, given: set[str]) -> Claim:
    """The claim on the folder of the run ``opts`` (``train.Options``) asks for.

    :class:`FolderError` for a folder that holds another run (without ``--overwrite``), that
    cannot be created or written, or that another program is using, and for a ``--resume``
    given with another ``--run-dir``; :class:`CheckpointError` for a ``--resume`` folder
    without a checkpoint. A refusal leaves the file system as it was.
    """
    folder = opts.folder()
    if not opts.resume:
        return claim(folder, overwrite=opts.overwrite, contents=run_files,
                     what="a training run", advice=f"continue it with --resume {folder}, "
                     "or replace it with --overwrite")
    if "run_dir" in given and Path(opts.run_dir) != folder:
        raise FolderError(f"--resume {folder} continues the run in {folder}: drop "
                          f"--run-dir {opts.run_dir}")
    if not (folder / CHECKPOINT).is_file():
        raise CheckpointError(f"no checkpoint to resume: {folder / CHECKPOINT} does not exist")
    return claim(folder)


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
