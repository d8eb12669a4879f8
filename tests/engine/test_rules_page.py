"""The patch catalogue of docs/rules.md (rule 10.3) matches the patches the engine plays."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from tests import ROOT

SCRIPT = ROOT / "docs" / "make_rules_patches.py"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_rules_patches", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rules_page_lists_the_current_patches() -> None:
    """Rule 10.3: ``--check`` passes on the page as committed."""
    assert load_script().main(["--check"]) == 0


def test_a_stale_catalogue_is_caught_and_rewritten(tmp_path: Path) -> None:
    """Rule 10.3: a page whose catalogue disagrees with the data fails ``--check`` until
    the script rewrites it."""
    script = load_script()
    page = tmp_path / "rules.md"
    text = script.PAGE.read_text(encoding="utf-8")
    page.write_text(text.replace("| 3 | `XXXXX` | 5 | 7 |", "| 3 | `XXXXX` | 5 | 8 |"),
                    encoding="utf-8")
    assert page.read_text(encoding="utf-8") != text
    assert script.main(["--check", "--page", str(page)]) == 1
    assert script.main(["--page", str(page)]) == 0
    assert page.read_text(encoding="utf-8") == text
    assert script.main(["--check", "--page", str(page)]) == 0


def test_a_page_without_the_markers_is_refused(tmp_path: Path) -> None:
    """Rule 10.3: the script names the missing markers instead of writing anywhere."""
    page = tmp_path / "rules.md"
    page.write_text("# Rules\n", encoding="utf-8")
    with pytest.raises(SystemExit):
        load_script().main(["--check", "--page", str(page)])
