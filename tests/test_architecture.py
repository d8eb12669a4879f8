"""The shape of the house: each layer is a folder, data flows one way, no module imports a
layer above it, there are no import cycles, folders and modules stay small, and the
installed distribution adds only ``patchwork_env`` to site-packages.

Layers, bottom to top: files → data → engine → views → envs → integrations → agents → evaluation →
training → web → cli. A module's layer is the folder it lives in, so a new module is placed by
where it is saved.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests import ROOT

FOLDERS = {"patchwork_env": ROOT / "patchwork_env",
           "patchwork_env.agents": ROOT / "agents",
           "patchwork_env.evaluation": ROOT / "evaluation",
           "patchwork_env.training": ROOT / "training",
           "patchwork_env.web": ROOT / "web",
           "patchwork_env.cli": ROOT / "cli",
           "patchwork_env.models": ROOT / "models"}
"""Where each part of the installed package lives in the repository."""
LAYERS = ["files", "data", "engine", "views", "envs", "integrations", "agents", "evaluation",
          "training", "web", "cli", "models"]
"""The layers, bottom to top: each is a folder, ``patchwork_env/<layer>/`` for the first
six and ``<layer>/`` at the repository's root for the rest."""
TOP = {"patchwork_env": "envs"}
"""Modules that are no folder's: the package's ``__init__`` gathers the public names of
the layers up to the environments."""
FORBIDDEN_BELOW_ENVS = ("gymnasium", "pettingzoo", "stable_baselines3", "sb3_contrib", "torch")
MAX_MODULES_PER_FOLDER = 15
MAX_LINES_PER_MODULE = 400


def package_files() -> dict[str, Path]:
    """Module name -> file for every module of the installed package, as laid out in the
    repository (``agents/`` is ``patchwork_env.agents``, and so on)."""
    modules = {}
    for package, folder in FOLDERS.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if package == "patchwork_env" and len(parts) > 1 and \
                    f"patchwork_env.{parts[0]}" in FOLDERS:
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join((package, *parts))] = path
    return modules


def layer_of(module: str) -> str:
    """The layer of ``module``: the folder it lives in, right below ``patchwork_env``."""
    if module in TOP:
        return TOP[module]
    layer = module.split(".")[1]
    if layer not in LAYERS:
        raise AssertionError(f"module {module} is in no layer's folder: {LAYERS}")
    return layer


def _type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def imports_of(module: str, path: Path, known: set[str]) -> tuple[set[str], set[str]]:
    """(project modules, outside top-level packages) that ``module`` imports anywhere
    (functions included), leaving out imports made only for type checkers."""
    is_package = path.stem == "__init__"
    package = module if is_package else module.rsplit(".", 1)[0]
    inside: set[str] = set()
    outside: set[str] = set()

    def visit(node: ast.AST) -> None:
        if _type_checking_block(node):
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                add(full if full in known else target)
        for child in ast.iter_child_nodes(node):
            visit(child)

    def add(name: str) -> None:
        if name == "patchwork_env" or name.startswith("patchwork_env."):
            while name not in known:
                name = name.rsplit(".", 1)[0]
            if name != module:
                inside.add(name)
        else:
            outside.add(name.split(".")[0])

    visit(ast.parse(path.read_text(), str(path)))
    return inside, outside


@pytest.fixture(scope="module")
def graph() -> dict[str, tuple[set[str], set[str]]]:
    files = package_files()
    return {m: imports_of(m, p, set(files)) for m, p in files.items()}


def test_every_module_has_a_layer(graph) -> None:
    for module in graph:
        layer_of(module)


def test_no_module_imports_a_layer_above_it(graph) -> None:
    upward = [f"{m} ({layer_of(m)}) imports {t} ({layer_of(t)})"
              for m, (inside, _) in graph.items() for t in sorted(inside)
              if LAYERS.index(layer_of(t)) > LAYERS.index(layer_of(m))]
    assert not upward, "\n".join(upward)


def test_there_is_no_import_cycle(graph) -> None:
    edges = {m: inside for m, (inside, _) in graph.items()}
    done: set[str] = set()
    path: list[str] = []

    def walk(m: str) -> None:
        if m in path:
            raise AssertionError("import cycle: " + " -> ".join([*path[path.index(m):], m]))
        if m in done:
            return
        path.append(m)
        for t in sorted(edges[m]):
            walk(t)
        path.pop()
        done.add(m)

    for m in sorted(edges):
        walk(m)


def test_the_engine_knows_no_framework(graph) -> None:
    leaks = [f"{m} imports {pkg}" for m, (_, outside) in graph.items()
             if layer_of(m) in ("data", "engine") for pkg in sorted(outside)
             if pkg in FORBIDDEN_BELOW_ENVS]
    assert not leaks, "\n".join(leaks)


def test_the_core_imports_without_agents_or_training() -> None:
    code = ("import sys; sys.modules['patchwork_env.agents'] = None; "
            "sys.modules['patchwork_env.training'] = None; "
            "sys.modules['patchwork_env.evaluation'] = None; "
            "import patchwork_env, patchwork_env.envs.gym_env, patchwork_env.envs.vector_env, "
            "patchwork_env.envs.aec, patchwork_env.envs.opponents; print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT / "tests", timeout=300)
    assert done.stdout.strip() == "ok", done.stderr


def test_the_wheel_installs_only_patchwork_names(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "--no-build-isolation", "--quiet", "-w", str(tmp_path), str(ROOT)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = tmp_path.glob("patchwork_env-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"patchwork_env"}, top
    for must in ("patchwork_env/agents/__init__.py", "patchwork_env/training/__init__.py",
                 "patchwork_env/evaluation/__init__.py", "patchwork_env/cli/play.py",
                 "patchwork_env/agents/az/search.py", "patchwork_env/engine/kernels.py",
                 "patchwork_env/models/ppo.pt", "patchwork_env/py.typed",
                 "patchwork_env/web/static/index.html", "patchwork_env/web/static/play.js"):
        assert must in names


def test_every_folder_of_the_package_is_a_package() -> None:
    missing = [str(folder.relative_to(ROOT)) for top in FOLDERS.values()
               for folder in [top, *top.rglob("*")]
               if folder.is_dir() and any(folder.glob("*.py"))
               and not (folder / "__init__.py").exists()]
    assert not missing, missing


def test_no_folder_holds_more_than_about_fifteen_modules() -> None:
    crowded = {str(folder.relative_to(ROOT)): n for top in FOLDERS.values()
               for folder in [top, *top.rglob("*")] if folder.is_dir()
               if (n := len(list(folder.glob("*.py")))) > MAX_MODULES_PER_FOLDER}
    assert not crowded, crowded


def test_no_module_is_over_four_hundred_lines() -> None:
    files = [*package_files().values(), *ROOT.glob("*.py"), *ROOT.glob("benchmarks/*.py"),
             *ROOT.glob("examples/*.py"), *ROOT.glob("tests/**/*.py")]
    long = {str(p.relative_to(ROOT)): n for p in files
            if (n := len(p.read_text().splitlines())) > MAX_LINES_PER_MODULE}
    assert not long, long
