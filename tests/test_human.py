"""The terminal player and ``python -m patchwork_env.play``, driven through their input."""

from __future__ import annotations

import io

import pytest
from patchwork_env.agents.greedy import GreedyAgent
from patchwork_env.agents.human import HumanAgent, QuitGame, legal_moves_text, orientations_text

from patchwork_env import ADVANCE, Game, format_action
from patchwork_env.play import main, play

from .positions import position


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
