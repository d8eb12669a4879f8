"""``patchwork-play --web``: it serves the page and prints its address, and refuses what it
cannot serve in one line."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.request

import pytest

from tests import ROOT
from tests.programs.program_runs import one_line_error

PLAY = [sys.executable, "-m", "patchwork_env.cli.play"]


def play(*args: str, code: str = "") -> subprocess.CompletedProcess:
    """``patchwork-play args``, after ``code`` (which may hide a package)."""
    program = f"{code}import sys; from patchwork_env.cli.play import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", program, *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


def test_a_missing_web_extra_is_one_line_saying_how_to_install_it() -> None:
    done = play("--web", code="import sys; sys.modules['starlette'] = None; ")
    assert 'pip install -e ".[web]"' in one_line_error(done)


def test_the_page_plays_against_an_agent_not_a_person() -> None:
    assert "'human'" in one_line_error(play("--web", "--opponent", "human"))


def test_a_bad_port_is_refused() -> None:
    assert "65535" in one_line_error(play("--web", "--port", "70000"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_web_serves_the_page_and_prints_its_address() -> None:
    pytest.importorskip("uvicorn", reason="the web extra is not installed")
    port = free_port()
    server = subprocess.Popen([*PLAY, "--web", "--no-browser", "--port", str(port),
                               "--opponent", "random", "--seed", "4", "--seat", "1"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        line = server.stdout.readline()
        assert f"http://127.0.0.1:{port}/" in line, line or server.stderr.read()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/config", timeout=30) as answer:
            config = json.loads(answer.read())
        assert (config["opponent"], config["seed"], config["seat"]) == ("random", 4, 1)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_web_serves_the_draft_when_asked() -> None:
    pytest.importorskip("uvicorn", reason="the web extra is not installed")
    port = free_port()
    server = subprocess.Popen([*PLAY, "--web", "--game", "draft", "--no-browser", "--port",
                               str(port), "--opponent", "mcts:50", "--rules", "no-stars"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        line = server.stdout.readline()
        assert f"http://127.0.0.1:{port}/" in line, line or server.stderr.read()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/config", timeout=30) as answer:
            config = json.loads(answer.read())
        assert (config["game"], config["opponent"], config["rules"]) == (
            "draft", "mcts:50", "no-stars")
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_draft_refuses_an_agent_or_preset_of_patchwork_only() -> None:
    assert "does not play Patchwork Draft" in one_line_error(
        play("--web", "--game", "draft", "--opponent", "ppo"))
    assert "no-stars" in one_line_error(play("--game", "draft", "--rules", "classic"))


def test_the_draft_plays_in_the_terminal_and_names_the_rule_a_move_breaks() -> None:
    moves = "moves\ndiscard slot 0\nquit\n"
    done = subprocess.run([*PLAY, "--game", "draft", "--opponent", "random", "--seed", "3"],
                          input=moves, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "buy slot 2 o0 at a1 b1" in done.stdout and "star squares (*)" in done.stdout
    assert "discard slot 0: a discard is legal only when" in done.stdout
    assert done.stdout.rstrip().endswith("game abandoned")
