"""The terminal player and ``patchwork-play`` (``python -m patchwork_env.cli.play``),
driven through their input."""

from __future__ import annotations

import importlib
import importlib.util
import io
import re

import numpy as np
import pytest

from patchwork_env import ADVANCE, Game, format_action, parse_action
from patchwork_env.agents.greedy import GreedyAgent
from patchwork_env.agents.human import (
    HELP,
    HumanAgent,
    QuitGame,
    explain_illegal,
    legal_moves_text,
    orientations_text,
)
from patchwork_env.cli.play import main, play
from patchwork_env.views.render import render_text
from tests import ROOT
from tests.positions import EMPTY, position
from tests.views.test_render import random_positions


def human(lines: str) -> tuple[HumanAgent, io.StringIO]:
    out = io.StringIO()
    return HumanAgent(stdin=io.StringIO(lines), stdout=out, color=False), out


def test_bad_input_is_explained_and_asked_again() -> None:
    game = Game.new(0)
    agent, out = human("\nfly away\nbuy slot 7 o0 at a1\nleather at a1\nbuy slot 0 o0 at z9\n"
                       "advance\n")
    assert agent.act_game(game) == ADVANCE
    text = out.getvalue()
    assert "type a move" in text
    assert "cannot read move 'fly away'" in text
    assert "slot must be in 0..2" in text
    assert "not a legal move" in text and "no leather patch is pending" in text
    assert "not a cell name: 'z9'" in text
    assert text.count("> ") == 6


def test_help_moves_and_shapes_then_a_buy() -> None:
    game = Game.new(1)
    buy = next(int(a) for a in game.legal_actions() if a < ADVANCE)
    agent, out = human(f"help\nmoves\nshapes 1\nshapes 9\nboard\n{format_action(buy)}\n")
    assert agent.act_game(game) == buy
    text = out.getvalue()
    assert "buy slot S oO at CELL" in text
    assert max(len(line) for line in HELP.splitlines()) <= 80
    assert legal_moves_text(game) in text
    assert orientations_text(game.circle[1]) in text
    assert "usage: shapes S" in text


def test_moves_lists_exactly_the_legal_moves() -> None:
    game = Game.new(2)
    listed = legal_moves_text(game)
    n_buys = sum(len(line.split(": ")[-1].split()) for line in listed.splitlines()[1:])
    assert listed.splitlines()[0] == "advance"
    assert n_buys + 1 == len(game.legal_actions())


def test_leather_prompt_lists_cells() -> None:
    game = position(pending_leather=1)
    assert legal_moves_text(game).startswith("leather at: a1 b1 c1")
    agent, _ = human("advance\nleather at e5\n")
    assert agent.act_game(game) == 1945 + 40


def test_quit_and_end_of_input() -> None:
    with pytest.raises(QuitGame):
        human("quit\n")[0].act_game(Game.new(0))
    with pytest.raises(EOFError):
        human("nonsense\n")[0].act_game(Game.new(0))


class ScriptedPerson(io.StringIO):
    """Stdin of someone who always types the last legal move of the game being played."""

    def __init__(self, game: Game) -> None:
        super().__init__()
        self.game = game

    def readline(self, *args: object) -> str:
        return format_action(int(self.game.legal_actions()[-1])) + "\n"


def test_a_whole_game_against_greedy() -> None:
    game = Game.new(5)
    out = io.StringIO()
    person = HumanAgent(stdin=ScriptedPerson(game), stdout=out, color=False)
    play(person, GreedyAgent(), seat=1, game=game)
    assert game.is_over
    assert "(greedy) plays" in out.getvalue()


def test_play_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("help\nquit\n"))
    assert main(["--opponent", "random", "--seed", "3", "--seat", "1", "--no-color"]) == 0
    assert "game abandoned" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "message"), [
    (["--opponent", "nobody"], "unknown agent 'nobody'"),
    (["--opponent", "mcts:fast"], "bad MCTS budget"),
    (["--seat", "2"], "invalid choice: 2"),
    (["--rules", "house"], "unknown rules preset 'house'"),
    (["--frobnicate"], "unrecognized arguments"),
])
def test_play_cli_bad_input(argv: list[str], message: str,
                            capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_play_cli_rejects_a_negative_seed(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--seed", "-1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--seed" in err and "agent" not in err and err.count("\n") == 1


def test_the_console_script_names_main() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    scripts = pyproject[pyproject.index("[project.scripts]"):].split("\n[", 1)[0]
    target = re.search(r'^patchwork-play = "(.+)"$', scripts, re.MULTILINE).group(1)
    module, _, function = target.partition(":")
    assert getattr(importlib.import_module(module), function) is main


def test_the_core_library_has_no_play_program() -> None:
    assert importlib.util.find_spec("patchwork_env.play") is None


# ----- the screen fits an 80x24 terminal ------------------------------------------------------

ANSI = re.compile(r"\x1b\[[0-9;]*m")
LONG_NOTE = "player 1 (mcts:1s) plays buy slot 2 o7 at i9 (patch 32: cost 10, time 4, income 3)"


def first_screen(game: Game, color: bool, layout: str = "compact") -> list[str]:
    """What a person sees up to the first input: notes, the screen and the prompt."""
    agent, out = human(format_action(int(game.legal_actions()[0])) + "\n")
    agent.color = color
    agent.layout = layout
    for _ in range(5):
        agent.note(LONG_NOTE)
    agent.act_game(game)
    return ANSI.sub("", out.getvalue()).split("\n")


def test_the_screen_and_prompt_fit_80_by_24() -> None:
    for k, game in enumerate(random_positions(24, seed=7)):
        color = k % 2 == 0
        if game.is_over:  # the last screen of a game: the position and the final score
            agent, out = human("")
            agent.color = color
            agent.note(LONG_NOTE)
            agent.say(agent.screen(game, extra_lines=1))
            agent.say("final score: you -12, greedy -30: greedy wins")
            lines = ANSI.sub("", out.getvalue()).rstrip("\n").split("\n")
        else:
            lines = first_screen(game, color)
            assert lines[-1] == "> "
        assert len(lines) <= 24, "\n".join(lines)
        assert max(len(line) for line in lines) <= 80, "\n".join(lines)


def test_auto_layout_follows_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    game = play_random(Game.new(4), 20)
    compact = render_text(game, color=False, layout="compact")
    full = render_text(game, color=False)
    assert "\n".join(first_screen(game, color=False, layout="auto")).count(compact) == 1
    monkeypatch.setattr(HumanAgent, "terminal_size", lambda self: (120, 60))
    assert full in "\n".join(first_screen(game, color=False, layout="auto"))
    monkeypatch.setattr(HumanAgent, "terminal_size", lambda self: (90, 30))
    wide = render_text(game, color=False, layout="compact", width=90)
    assert "\n".join(first_screen(game, color=False, layout="auto")).count(wide) == 1


def test_board_and_full_commands() -> None:
    game = play_random(Game.new(6), 10)
    agent, out = human("board\nfull\nadvance\n")
    agent.act_game(game)
    text = out.getvalue()
    assert text.count(render_text(game, color=False, layout="compact")) == 2
    assert render_text(game, color=False) in text


def test_the_opponents_moves_appear_above_the_next_screen() -> None:
    game = Game.new(5, first_player=0)
    out = io.StringIO()
    person = HumanAgent(stdin=ScriptedPerson(game), stdout=out, color=False, layout="compact")
    play(person, GreedyAgent(), seat=1, game=game)
    first = out.getvalue().split("> ")[0].splitlines()  # up to the first prompt
    top = first.index("Patchwork: player 1 to move")
    assert 1 <= top <= 3
    assert all(line.startswith("player 0 (greedy) plays ") for line in first[:top])
    assert "(greedy) plays" in out.getvalue().split("> ")[1]


def play_random(game: Game, moves: int) -> Game:
    rng = np.random.default_rng(0)
    for _ in range(moves):
        game.step(int(rng.choice(game.legal_actions())))
    return game


# ----- mistakes are explained in the notation ----------------------------------------------------

def explain(game: Game, move: str) -> str:
    """What the player is told after typing ``move``; checks it is refused and fits 80."""
    text = explain_illegal(game, parse_action(move))
    assert int(parse_action(move)) not in game.legal_actions()
    assert text.startswith(f"not a legal move: {format_action(parse_action(move))}: ")
    assert max(len(line) for line in text.splitlines()) <= 80
    for engine_word in ("illegal action", "canonical", "anchor"):
        assert engine_word not in text
    return " ".join(text.split())


def test_a_patch_too_expensive() -> None:
    game = position(buttons=(3, 5), circle=[4, 19, 1, 0])  # costs 6, 10, 2
    text = explain(game, "buy slot 0 o0 at a1")
    assert "you have 3 buttons, patch 4 costs 6" in text
    assert "you can buy slot 2 (patch 1, cost 2) or advance (+1 button)" in text
    assert "you have 3 buttons, patch 19 costs 10" in explain(game, "buy slot 1 o0 at a1")


def test_a_patch_off_the_bottom_edge() -> None:
    game = position(buttons=(20, 20), circle=[3, 1, 2, 0])  # patch 3 is 1x5; o1 stands it up
    text = explain(game, "buy slot 0 o1 at c6")
    assert "patch 3 would leave the board at the bottom edge" in text
    assert "5 rows by 1 column: its corner goes on a1 .. i5" in text
    assert "nearest legal moves: buy slot 0 o1 at c5, b5 or d5" in text


def test_a_patch_off_the_right_and_both_edges() -> None:
    game = position(buttons=(20, 20), circle=[4, 1, 2, 0])  # patch 4 is 2x2
    assert "leave the board at the right edge" in explain(game, "buy slot 0 o0 at i3")
    text = explain(game, "buy slot 0 o0 at i9")
    assert "leave the board at the bottom and right edges" in text
    assert "nearest legal moves: buy slot 0 o0 at h8" in text


def test_a_patch_on_covered_cells() -> None:
    quilt = "\n".join([".........", ".........", ".........", "...X.....", "...X.....",
                       ".........", ".........", ".........", "........."])
    game = position(quilts=(quilt, EMPTY), circle=[1, 2, 3, 0])  # patch 1 is 1x3
    text = explain(game, "buy slot 0 o1 at d3")  # o1: standing, d3 d4 d5
    assert "it overlaps your quilt at d4, d5" in text
    assert "nearest legal moves: buy slot 0 o1 at c3, e3 or c2" in text
    assert "the patch" not in text and "leave the board" not in text


def test_an_orientation_with_a_lower_number() -> None:
    # the 2x2 square looks the same in every orientation
    game = position(buttons=(20, 20), circle=[4, 1, 2, 0])
    text = explain(game, "buy slot 0 o3 at c4")
    assert "patch 4 has the same shape in o3 as in o0" in text
    assert "nearest legal moves: buy slot 0 o0 at c4" in text
    game = position(circle=[1, 2, 3, 0])  # the 1x3 bar: o2 is o0, o3 is o1
    assert "nearest legal moves: buy slot 0 o1 at e2" in explain(game, "buy slot 0 o3 at e2")


def test_a_patch_that_fits_nowhere() -> None:
    quilt = "\n".join(["X.X.X.X.X"] * 9)
    game = position(quilts=(quilt, EMPTY), buttons=(20, 20), circle=[4, 1, 2, 0])
    text = explain(game, "buy slot 0 o0 at b1")
    assert "it overlaps your quilt at c1, c2" in text
    assert "patch 4 fits nowhere on your quilt; you can" in text and "advance" in text


def test_an_empty_slot_and_a_bare_action_id() -> None:
    game = position(circle=[5, 0])
    text = explain(game, "buy slot 2 o0 at a1")
    assert "slot 2 is empty: only 2 patches are left to buy (slots 0..1)" in text
    # 1376: slot 2 (the 2x2 square), o0, at i9
    text = explain(position(buttons=(20, 20), circle=[1, 2, 4, 0]), "1376")
    assert "buy slot 2 o0 at i9" in text and "1376" not in text
    assert "would leave the board at the bottom and right edges" in text


def test_leather_mistakes() -> None:
    quilt = "\n".join(["XXXXXXXXX"] * 4 + ["XXXX.XXXX"] + ["XXXXXXXXX"] * 3 + ["X........"])
    game = position(quilts=(quilt, EMPTY), pending_leather=1)
    text = explain(game, "advance")
    assert "first place the leather patch you won" in text
    assert "e.g. leather at e5, e9 or d9" in text
    assert "first place the leather patch" in explain(game, "buy slot 0 o0 at a1")
    text = explain(game, "leather at d5")
    assert "d5 is already covered on your quilt" in text
    assert "the nearest empty cells: leather at e5, d9 or c9" in text
    text = explain(position(), "leather at e5")
    assert "no leather patch is pending" in text and "advance (+1 button)" in text


def test_a_mistake_is_explained_at_the_prompt() -> None:
    game = position(buttons=(3, 5), circle=[4, 19, 1, 0])
    agent, out = human("buy slot 0 o0 at a1\nadvance\n")
    assert agent.act_game(game) == ADVANCE
    assert "you have 3 buttons, patch 4 costs 6" in out.getvalue()
