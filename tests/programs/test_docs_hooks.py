"""The documentation build's hooks: the model card's include, the package laid out for the
API reference, and the Sphinx roles shown as code. The build itself (``mkdocs build
--strict``) runs in CI."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from tests.programs.program_runs import ROOT


def hook(name: str) -> ModuleType:
    """``docs/hooks/NAME.py`` as a module."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "hooks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_model_card_is_included_with_links_relative_to_docs(tmp_path: Path) -> None:
    include = hook("model_card").include
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "README.md").write_text(
        "# Card\n![curve](../docs/curve.png) [Training](../docs/training.md#runs) [x](y.md)\n")
    page = include("intro\n<!-- include: models/README.md -->\nend\n", tmp_path)
    assert page == ("intro\n# Card\n![curve](curve.png) [Training](training.md#runs) [x](y.md)"
                    "\n\nend\n")
    assert include("no marker here\n", tmp_path) == "no marker here\n"
    with pytest.raises(ValueError, match=r"include: no file models/none\.md"):
        include("<!-- include: models/none.md -->", tmp_path)


def test_the_docs_models_page_is_the_card() -> None:
    assert "<!-- include: models/README.md -->" in (ROOT / "docs" / "models.md").read_text()


def test_the_package_is_laid_out_as_installed(tmp_path: Path) -> None:
    lay_out = hook("api_source").lay_out
    (tmp_path / "patchwork_env" / "engine").mkdir(parents=True)
    (tmp_path / "patchwork_env" / "__init__.py").write_text("")
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "__init__.py").write_text('"""agents"""')
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.package-dir]\n"patchwork_env.agents" = "agents"\n'
        '"patchwork_env.agents.deeper" = "elsewhere"\n"other.pkg" = "other"\n')
    stage = lay_out(tmp_path)
    package = stage / "patchwork_env"
    assert sorted(p.name for p in package.iterdir()) == ["__init__.py", "agents", "engine"]
    assert (package / "agents" / "__init__.py").read_text() == '"""agents"""'
    assert lay_out(tmp_path) == stage  # a second build starts from a fresh layout


def test_sphinx_roles_become_code_spans() -> None:
    pytest.importorskip("griffe", reason="the docs extra is not installed")
    plain = hook("sphinx_roles").plain
    assert plain("see :class:`~patchwork_env.Game` and :func:`.heuristic.best_placement`") \
        == "see `Game` and `heuristic.best_placement`"
    assert plain(":py:meth:`GameBatch.step`, ``literal``, :data:`SPECS`") \
        == "`GameBatch.step`, ``literal``, `SPECS`"
