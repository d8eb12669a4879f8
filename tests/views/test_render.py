"""Tests of the text and RGB pictures of a position."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from patchwork_env import PATCHES, Game, Rules
from patchwork_env.data.patches import LEATHER_ID
from patchwork_env.views.render import (
    CELL,
    COMPACT_LINES,
    COMPACT_WIDTH,
    HEIGHT,
    LEATHER_COLOR,
    PATCH_COLORS,
    PATCH_SYMBOLS,
    UNKNOWN_COLOR,
    WIDTH,
    quilt_cell_box,
    render_rgb,
    render_text,
)

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def play(game: Game, moves: int, seed: int) -> Game:
    """Play ``moves`` uniformly random legal moves (fewer if the game ends)."""
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        if game.is_over:
            break
        game.step(int(rng.choice(game.legal_actions())))
    return game


@pytest.fixture(scope="module")
def midgame() -> Game:
    """Several patches on both quilts and a leather patch on one of them."""
    game = play(Game.new(seed=1), 20, seed=0)
    ids = game.batch.state[0]["cell_patches"]
    assert (ids == LEATHER_ID).any()
    assert all(len(set(ids[p].tolist()) - {-1, LEATHER_ID}) >= 3 for p in range(2))
    return game


@pytest.fixture(scope="module")
def finished() -> Game:
    return play(Game.new(seed=5), 1000, seed=1)


def quilt_rows(text: str) -> list[tuple[list[str], list[str]]]:
    """The nine rows of both quilts as lists of cell symbols, read from the text picture."""
    rows = []
    for line in text.splitlines():
        tokens = line.split()
        if len(tokens) == 20 and tokens[0].isdigit() and tokens[10] == tokens[0]:
            assert int(tokens[0]) == len(rows) + 1
            rows.append((tokens[1:10], tokens[11:20]))
    assert len(rows) == 9
    return rows


def symbol(pid: int) -> str:
    return "." if pid < 0 else "*" if pid == LEATHER_ID else PATCH_SYMBOLS[pid]


# ----- text -------------------------------------------------------------------------------

def test_text_quilts_show_each_cell(midgame: Game) -> None:
    rows = quilt_rows(render_text(midgame, color=False))
    ids = midgame.batch.state[0]["cell_patches"]
    for p in range(2):
        drawn = [sym for row in rows for sym in row[p]]
        assert sum(sym != "." for sym in drawn) == len(midgame.quilt_cells(p))
        assert drawn == [symbol(int(i)) for i in ids[p]]  # a1 is cell 0, rows go down


def test_text_colour_codes_only_when_asked(midgame: Game) -> None:
    plain = render_text(midgame, color=False)
    colored = render_text(midgame, color=True)
    assert "\x1b[" not in plain
    assert str(midgame) == plain
    assert "\x1b[48;5;" in colored  # patches painted on their own background colour
    assert [line.rstrip() for line in ANSI.sub("", colored).splitlines()] == [
        line.rstrip() for line in plain.splitlines()
    ]


def test_text_tokens_and_track_marks(midgame: Game) -> None:
    lines = render_text(midgame, color=False).splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("time track"))
    start = re.match(r"time track\s+", lines[i]).end()
    track = lines[i][start:]
    end = midgame.rules.track_end
    assert len(track) == end + 1
    front = max(midgame.position)
    for x in range(end + 1):
        if x in midgame.rules.leather_positions and x > front:
            assert track[x] == "*", x
        elif x in midgame.rules.income_positions:
            assert track[x] == "o", x
        else:
            assert track[x] == "-", x
    assert midgame.position[0] != midgame.position[1]
    for p in range(2):
        token = lines[i + 1 + p]
        assert token.startswith(f"  player {p}")
        assert token.index("^") - start == midgame.position[p]
        assert token.endswith(f"^ {midgame.position[p]}")


def test_text_lists_buyable_patches_in_circle_order(midgame: Game) -> None:
    lines = render_text(midgame, color=False).splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("slot 0:"))
    heads = [m.groups() for m in re.finditer(r"slot (\d): patch (\d+) (\S)", lines[i])]
    figures = re.findall(r"cost (\d+)  time (\d+)  income (\d+)", lines[i + 1])
    circle = midgame.circle
    assert [(int(s), int(pid)) for s, pid, _ in heads] == list(enumerate(circle[:3]))
    assert [sym for _, _, sym in heads] == [PATCH_SYMBOLS[pid] for pid in circle[:3]]
    expected = [(PATCHES[pid].cost, PATCHES[pid].time, PATCHES[pid].income) for pid in circle[:3]]
    assert [tuple(map(int, f)) for f in figures] == expected
    rest = " ".join(lines[i + 2 :])
    listed = [int(pid) for pid in re.findall(r"(\d+) \S \d+/\d+/\d+", rest)]
    assert listed == circle[3:]


@pytest.mark.parametrize("rules", ["default", Rules(track_end=120, income_positions=(60, 120))])
def test_text_fits_a_100_column_terminal(rules: str | Rules) -> None:
    game = play(Game.new(seed=3, rules=rules), 12, seed=3)
    for color in (False, True):
        lines = ANSI.sub("", render_text(game, color=color)).splitlines()
        assert max(len(line) for line in lines) <= 100


def test_text_of_a_finished_game(finished: Game) -> None:
    text = render_text(finished, color=False)
    s = finished.scores()
    w = finished.winner
    assert f"game over: player {w} wins, {s[w]} to {s[1 - w]}" in text
    assert "to move" not in text


# ----- RGB --------------------------------------------------------------------------------

def fill_pixel(image: np.ndarray, player: int, cell: int) -> tuple[int, int, int]:
    """A pixel inside the cell, clear of the seams and of a centred button symbol."""
    x0, y0, _, _ = quilt_cell_box(player, cell)
    return tuple(image[y0 + CELL // 5, x0 + CELL // 5].tolist())


def test_rgb_shape_and_determinism(midgame: Game) -> None:
    image = render_rgb(midgame)
    assert image.shape == (HEIGHT, WIDTH, 3)
    assert image.dtype == np.uint8
    assert np.array_equal(image, render_rgb(midgame))
    assert np.array_equal(image, render_rgb(Game.from_dict(midgame.state_dict())))
    assert not np.array_equal(image, render_rgb(Game.new(seed=1)))


def test_rgb_cells_in_their_patch_colour(midgame: Game) -> None:
    image = render_rgb(midgame)
    ids = midgame.batch.state[0]["cell_patches"]
    for p in range(2):
        for cell, pid in enumerate(ids[p].tolist()):
            pixel = fill_pixel(image, p, cell)
            if pid == LEATHER_ID:
                assert pixel == LEATHER_COLOR
            elif pid >= 0:
                assert pixel == PATCH_COLORS[pid], (p, cell, pid)
            else:
                assert pixel not in PATCH_COLORS and pixel != LEATHER_COLOR


def test_rgb_cell_boxes_tile_the_quilts() -> None:
    for p in range(2):
        x0, y0, x1, y1 = quilt_cell_box(p, 0)
        assert (x1 - x0, y1 - y0) == (CELL, CELL)
        assert quilt_cell_box(p, 10)[:2] == (x0 + CELL, y0 + CELL)  # b2
        assert quilt_cell_box(p, 80)[2:] == (x0 + 9 * CELL, y0 + 9 * CELL)
        assert x0 >= 0 and x0 + 9 * CELL <= WIDTH and y0 + 9 * CELL <= HEIGHT
    assert quilt_cell_box(0, 80)[2] < quilt_cell_box(1, 0)[0]


def test_unrecorded_patches_are_drawn_plainly(finished: Game) -> None:
    d = finished.state_dict()
    del d["cell_patches"]
    game = Game.from_dict(d)
    image = render_rgb(game)
    rows = quilt_rows(render_text(game, color=False))
    for p in range(2):
        covered = set(game.quilt_cells(p))
        for cell in range(81):
            r, c = divmod(cell, 9)
            assert rows[r][p][c] == ("#" if cell in covered else ".")
            assert (fill_pixel(image, p, cell) == UNKNOWN_COLOR) == (cell in covered)


def test_rgb_other_rules_and_finished_games(finished: Game) -> None:
    long_track = play(Game.new(seed=2, rules=Rules(track_end=120, income_positions=(9, 120))),
                      10, seed=2)
    for game in (finished, long_track, Game.new(seed=0, rules="revised")):
        image = render_rgb(game)
        assert image.shape == (HEIGHT, WIDTH, 3)


# ----- the compact screen -------------------------------------------------------------------

def random_positions(n_games: int, seed: int) -> list[Game]:
    """Positions from random games under every preset: openings, middles, pending leather
    patches and finished games."""
    rng = np.random.default_rng(seed)
    games = []
    for i in range(n_games):
        game = Game.new(seed=seed + i, rules=("default", "revised", "classic")[i % 3])
        stops = set(rng.integers(0, 60, 3).tolist())
        for move in range(1000):
            if game.is_over:
                break
            if move in stops or game.pending_leather:
                games.append(game.copy())
            game.step(int(rng.choice(game.legal_actions())))
        games.append(game)
    assert any(g.pending_leather for g in games) and any(g.is_over for g in games)
    return games


def compact_rows(text: str) -> list[tuple[list[str], list[str]]]:
    """The nine rows of both quilts, read from the compact screen."""
    rows = []
    for line in text.splitlines():
        if len(line) >= 41 and line[0].isdigit() and line[22] == line[0]:
            rows.append((line[2:20].split(), line[24:42].split()))
    assert len(rows) == 9
    return rows


def test_compact_screen_fits_80_by_24() -> None:
    for game in random_positions(30, seed=11):
        for color in (False, True):
            lines = ANSI.sub("", render_text(game, color=color, layout="compact")).splitlines()
            assert max(len(line) for line in lines) <= COMPACT_WIDTH
            assert len(lines) <= COMPACT_LINES


def test_compact_screen_shows_the_position(midgame: Game) -> None:
    text = render_text(midgame, color=False, layout="compact")
    ids = midgame.batch.state[0]["cell_patches"]
    rows = compact_rows(text)
    for p in range(2):
        assert [sym for row in rows for sym in row[p]] == [symbol(int(i)) for i in ids[p]]
    circle = midgame.circle
    heads = re.findall(r"#(\d+) (\d+)/(\d+)/(\d+)", text)
    assert [int(h[0]) for h in heads] == circle[:3]
    assert [tuple(map(int, h[1:])) for h in heads] == [
        (PATCHES[pid].cost, PATCHES[pid].time, PATCHES[pid].income) for pid in circle[:3]]
    then = text[text.index("then "):]
    listed = [int(pid) for pid in re.findall(r"(\d+) \S \d+/\d+/\d+", then)]
    assert listed == circle[3 : 3 + len(listed)] and len(listed) >= 9
    track = next(line for line in text.splitlines() if line.startswith("time "))
    for p in range(2):
        assert track[5 + midgame.position[p]] == str(p)
    assert track.endswith(f"0 at {midgame.position[0]}, 1 at {midgame.position[1]}")
    assert render_text(midgame, color=False) == str(midgame)  # the full picture stays default


def test_compact_screen_of_a_finished_game(finished: Game) -> None:
    text = render_text(finished, color=False, layout="compact")
    s = finished.scores()
    w = finished.winner
    assert f"game over: player {w} wins, {s[w]} to {s[1 - w]}" in text
    assert "to move" not in text


@pytest.mark.parametrize("width", [44, 60, 79])
def test_compact_screen_on_a_narrow_terminal(midgame: Game, width: int) -> None:
    lines = render_text(midgame, color=False, layout="compact", width=width).splitlines()
    assert max(len(line) for line in lines) <= width
    assert compact_rows("\n".join(lines))


def test_compact_screen_of_a_long_track() -> None:
    game = play(Game.new(seed=3, rules=Rules(track_end=120, income_positions=(60, 120))), 12, 3)
    lines = render_text(game, color=False, layout="compact").splitlines()
    assert max(len(line) for line in lines) <= COMPACT_WIDTH


def test_unknown_layout() -> None:
    with pytest.raises(ValueError, match="layout must be one of"):
        render_text(Game.new(seed=0), layout="tiny")


# ----- the modules ----------------------------------------------------------------------------

RENDER_MODULES = ["render", "render_common", "render_rgb", "render_text"]


@pytest.mark.parametrize("name", RENDER_MODULES)
def test_render_modules_do_not_import_the_game_at_run_time(name: str) -> None:
    """``game`` imports the renderer for ``str(game)``: an import back would be a cycle."""
    import patchwork_env

    path = Path(patchwork_env.__file__).parent / "views" / f"{name}.py"
    tree = ast.parse(path.read_text())
    assert ast.get_docstring(tree)
    type_only = {id(node) for stmt in tree.body if isinstance(stmt, ast.If)
                 and ast.unparse(stmt.test) == "TYPE_CHECKING" for node in ast.walk(stmt)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and id(node) not in type_only:
            assert node.module not in ("game", "patchwork_env.views.game"), name
            assert "agents" not in (node.module or ""), name
    assert len(path.read_text().splitlines()) <= 400
