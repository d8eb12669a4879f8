"""The shape of the house: data flows one way, no module imports a layer above it, no
import cycles, and the installed distribution adds only ``patchwork_env`` to site-packages.

Layers, bottom to top: data → engine → views → envs → agents → training. Every module of
the package is assigned a layer here; a new module fails the test until it is placed.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["data", "engine", "views", "envs", "agents", "training", "models"]
CORE = {
    "data": ["patches", "rules", "actions", "tables", "validation"],
    "engine": ["bits", "compiling", "kernels", "batch_kernels", "engine", "possible_states",
               "serialize"],
    "views": ["observation", "render_common", "render_text", "render_rgb",
              "render", "game"],
    "envs": ["rewards", "opponents", "duel", "render_modes", "one_game", "gym_env", "vector_env",
             "aec_raw", "aec", "sb3", "openspiel", "rllib", "__init__"],
}
FORBIDDEN_BELOW_ENVS = ("gymnasium", "pettingzoo", "stable_baselines3", "sb3_contrib", "torch")


def package_files() -> dict[str, Path]:
    """Module name -> file for every module of the installed package, as laid out in the
    repository (``agents/`` and ``training/`` are ``patchwork_env.agents`` / ``.training``)."""
    folders = {"patchwork_env": ROOT / "patchwork_env",
               "patchwork_env.agents": ROOT / "agents",
               "patchwork_env.training": ROOT / "training",
               "patchwork_env.models": ROOT / "models"}
    modules = {}
    for package, folder in folders.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join((package, *parts))] = path
    return modules


def layer_of(module: str) -> str:
    if module.startswith("patchwork_env.agents"):
        return "agents"
    if module.startswith("patchwork_env.training"):
        return "training"
    if module.startswith("patchwork_env.models"):
        return "models"
    stem = "__init__" if module == "patchwork_env" else module.split(".", 1)[1]
    for layer, stems in CORE.items():
        if stem in stems:
            return layer
    raise AssertionError(f"module {module} has no layer: add it to CORE in {__file__}")


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
            "import patchwork_env, patchwork_env.gym_env, patchwork_env.vector_env, "
            "patchwork_env.aec, patchwork_env.opponents; print('ok')")
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
                 "patchwork_env/models/ppo.pt", "patchwork_env/py.typed"):
        assert must in names
