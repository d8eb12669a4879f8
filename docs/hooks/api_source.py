"""MkDocs hook: lay out the package as it is installed, for the API reference.

The repository keeps ``agents/``, ``evaluation/``, ``training/``, ``cli/`` and ``models/``
at its root and installs them as subpackages of ``patchwork_env`` (the
``[tool.setuptools.package-dir]`` table of ``pyproject.toml``). mkdocstrings reads source
files, not the installed package, so before each build this hook makes
``build/api-source/patchwork_env/``: one symbolic link per entry of ``patchwork_env/`` and
one per mapped folder, under its installed name. The handler's ``paths`` option points there.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # the docs extra installs tomli there
    import tomli as tomllib

PACKAGE = "patchwork_env"
ROOT = Path(__file__).resolve().parents[2]
"""The repository root."""
STAGE = Path("build") / "api-source"
"""Where the laid-out package goes, relative to the root (the handler's ``paths``)."""


def subpackage_folders(root: Path) -> dict[str, Path]:
    """``{subpackage name: its folder}`` for every folder mapped into the package."""
    table = tomllib.loads((root / "pyproject.toml").read_text())
    mapping = table["tool"]["setuptools"].get("package-dir", {})
    prefix = PACKAGE + "."
    return {name[len(prefix):]: root / folder for name, folder in mapping.items()
            if name.startswith(prefix) and "." not in name[len(prefix):]}


def lay_out(root: Path) -> Path:
    """Build ``root/STAGE/patchwork_env`` from links; returns the folder that holds it."""
    stage = root / STAGE
    package = stage / PACKAGE
    if stage.exists():
        shutil.rmtree(stage)
    package.mkdir(parents=True)
    entries = {p.name: p for p in (root / PACKAGE).iterdir() if p.name != "__pycache__"}
    entries.update(subpackage_folders(root))
    for name, target in sorted(entries.items()):
        (package / name).symlink_to(target.resolve(), target_is_directory=target.is_dir())
    return stage


def on_startup(**kwargs: Any) -> None:
    """MkDocs entry point, before any plugin reads its configuration."""
    lay_out(ROOT)
