"""On-disk caches of compiled code: a function's cache goes stale when any source file its
compiled code may include changes, not only its own file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numba
import pytest
from numba.core import caching

from patchwork_env.engine import compiling
from tests import ROOT

PROBE = """
import sys
import numpy as np
import patchwork_env
from patchwork_env.agents import heuristic
from patchwork_env.data.rules import get_rules
from patchwork_env.data.tables import RuleTables

for module in (patchwork_env, heuristic):
    assert module.__file__.startswith(sys.argv[1]), module.__file__
t = RuleTables.of(get_rules("default"))
value = heuristic.quilt_value(np.uint64(0), np.uint64(0), 1, np.zeros(0, np.int64), t.arrays,
                              heuristic.DEFAULT_WEIGHTS)
print(value, sum(heuristic.quilt_value.stats.cache_hits.values()))
"""
"""Prints the heuristic's value of an empty quilt (``quilt_value`` calls ``shape_features``
of ``agents/quilt_shape.py``, compiled into it) and how often its cache was loaded."""

HELPER_RESULT = "return empty, 4 * empty - open_sides, isolated, dead_ends"


def test_the_stamping_locators_are_installed() -> None:
    from patchwork_env.agents.quilt_shape import shape_features

    assert compiling.install_locators()
    classes = caching.CacheImpl._locator_classes
    assert [c.__name__ for c in classes[:3]] == [
        f"IncludedSources{name}" for name in compiling.LOCATOR_BASES]
    assert sum(getattr(c, "covers_included_sources", False) for c in classes) == 3  # once
    locator = shape_features._cache._impl.locator
    assert getattr(locator, "covers_included_sources", False), type(locator)


def test_an_unknown_numba_layout_keeps_numbas_caches_and_says_so(monkeypatch) -> None:
    monkeypatch.setattr(caching.CacheImpl, "_locator_classes", None)
    with pytest.warns(RuntimeWarning, match=f"numba {numba.__version__} .* clear the caches"):
        assert not compiling.install_locators()


def test_a_module_belongs_to_the_folder_of_its_top_level_subpackage() -> None:
    from patchwork_env.agents import heuristic
    from patchwork_env.agents.az import kernels

    agents = Path(heuristic.__file__).resolve().parent
    assert compiling.subpackage_folder(kernels.__name__, kernels.__file__) == agents
    assert compiling.subpackage_folder("patchwork_env.agents", str(agents / "__init__.py")
                                       ) == agents
    engine = Path(compiling.__file__).resolve().parent
    assert compiling.subpackage_folder(compiling.__name__, compiling.__file__) == engine


def test_editing_a_helper_that_compiled_code_includes_changes_what_runs(tmp_path: Path) -> None:
    package = tmp_path / "patchwork_env"
    skip = shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc")
    shutil.copytree(ROOT / "patchwork_env", package, ignore=skip)
    shutil.copytree(ROOT / "agents", package / "agents", ignore=skip)  # the installed layout
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def probe() -> tuple[float, int]:
        done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        value, hits = done.stdout.split()
        return float(value), int(hits)

    value, hits = probe()
    assert hits == 0  # compiled and cached
    assert probe() == (value, 1)  # loaded from the cache: nothing changed
    helper = package / "agents" / "quilt_shape.py"
    source = helper.read_text()
    assert source.count(HELPER_RESULT) == 1
    helper.write_text(source.replace(HELPER_RESULT, HELPER_RESULT.replace("empty,", "empty + 1,")))
    assert probe() == (value - 2.0, 0)  # one more empty cell costs 2 points; compiled anew


def test_a_cache_files_name_changes_with_the_sources_it_includes(monkeypatch) -> None:
    """So an index written before an edit is never unpickled after it (it may name a type
    that has since moved, which would fail to load instead of reading as stale)."""
    from patchwork_env.agents.quilt_shape import shape_features

    locator = shape_features._cache._impl.locator
    before = locator.get_disambiguator()
    monkeypatch.setattr(compiling, "sources_stamp", lambda module, py_file: "f" * 64)
    after = locator.get_disambiguator()
    assert after != before
    assert after.endswith("-" + "f" * 12)
