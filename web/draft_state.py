"""What the page draws of a Patchwork Draft game (section 13 of the rules), as JSON, and
how the draft's moves are described and refused in words.

The deck's order is hidden from both players (rule 13.9): a position holds how many
patches the deck has and which ones, sorted, never their order.
"""

from __future__ import annotations

from typing import Any

from patchwork_env.data.actions import SLOT_STRIDE, cell_name
from patchwork_env.data.draft_actions import DISCARD_BASE, format_draft_action
from patchwork_env.data.patches import LEATHER_ID, PATCHES
from patchwork_env.data.rules import BOARD_SIZE
from patchwork_env.views.render_common import UNKNOWN
from patchwork_env.web.games import Session


def patch_of(game: Any, action: int) -> int | None:
    """The face-up patch a buy or discard takes."""
    slot = action - DISCARD_BASE if action >= DISCARD_BASE else action // SLOT_STRIDE
    return game.face_up[slot] if 0 <= slot < len(game.face_up) else None


def describe(game: Any, action: int) -> str:
    """The move's notation with the patch it takes: ``buy slot 1 o3 at c4 (patch 12: cost
    3, star)`` or ``discard slot 2 (patch 5)``."""
    text = format_draft_action(action)
    patch = patch_of(game, action)
    if patch is None:
        return text
    if action >= DISCARD_BASE:
        return f"{text} (patch {patch})"
    star = ", star" if patch in game.rules.starred_patches else ""
    return f"{text} (patch {patch}: cost {PATCHES[patch].cost}{star})"


def why_illegal(game: Any, action: int) -> str:
    """Why ``action`` is not a legal move in ``game``, naming the rule, in one line."""
    head = f"not a legal move: {format_draft_action(action)}"
    if game.is_over:
        return f"{head}: the game is over"
    if action >= DISCARD_BASE:
        return (f"{head}: a discard is legal only when no face-up patch can be bought "
                "(rule 13.6)")
    patch = patch_of(game, action)
    if patch is None:
        return f"{head}: slot {action // SLOT_STRIDE} of the row is empty"
    me = game.to_move
    cost = PATCHES[patch].cost
    if cost > game.buttons[me]:
        return (f"{head}: patch {patch} costs {cost} buttons and you have "
                f"{game.buttons[me]} (rule 13.2)")
    try:
        cells = game.action_cells(action)
    except ValueError:
        cells = []
    covered = sorted(set(cells) & set(game.quilt_cells(me)))
    if covered:
        return (f"{head}: it overlaps your quilt at {', '.join(map(cell_name, covered))} "
                "(rule 13.2)")
    try:
        game.copy().step(action)
    except ValueError as e:
        return f"{head}: {str(e).rpartition('): ')[2]}"
    return f"{head}: it is not among the legal moves"


def full_lines(cells: list[int]) -> tuple[list[int], list[int]]:
    """The full rows and full columns (0-based) of a quilt whose covered cells are
    ``cells``."""
    covered = set(cells)
    n = BOARD_SIZE
    rows = [r for r in range(n) if all(r * n + c in covered for c in range(n))]
    cols = [c for c in range(n) if all(r * n + c in covered for r in range(n))]
    return rows, cols


def final_breakdown(game: Any) -> list[dict[str, int]]:
    """Each player's score in parts (rule 13.8): row and column points, star points,
    buttons, and the total (equal to the game's score). Each full line scored one point
    when it was completed (rule 13.4), so the star points are the rest of the points."""
    rows = []
    for p, total in enumerate(game.scores()):
        lines = sum(map(len, full_lines(game.quilt_cells(p))))
        rows.append({"line_points": lines, "star_points": game.points[p] - lines,
                     "buttons": game.buttons[p], "total": total})
    return rows


def status(game: Any) -> str:
    """``player 0 to move``, or who won, by how much, and how a tie was settled."""
    if not game.is_over:
        return f"player {game.to_move} to move"
    scores, w = game.scores(), game.winner
    tie = " (a tie goes to the player who moved second)" if scores[0] == scores[1] else ""
    return f"game over: player {w} wins, {scores[w]} to {scores[1 - w]}{tie}"


def draft_details(session: Session) -> dict[str, Any]:
    """What a Patchwork Draft position adds: the players' figures, quilts and full lines,
    the face-up row, the deck's size and contents (sorted: never its order), the stars,
    the discards offered and the final breakdown."""
    game, spec = session.game, session.opponent
    scores = game.scores()
    ids = game.batch.state[0]["cell_patches"].astype(int)
    ids[ids == LEATHER_ID] = UNKNOWN
    players = []
    for p in (0, 1):
        rows, cols = full_lines(game.quilt_cells(p))
        players.append({"name": "you" if p == session.seat else spec,
                        "human": p == session.seat, "buttons": game.buttons[p],
                        "points": game.points[p], "score": scores[p],
                        "quilt": ids[p].tolist(), "full_rows": rows, "full_cols": cols})
    return {
        "status": status(game),
        "players": players,
        "first_player": game.first_player,
        "face_up": game.face_up,
        "deck_size": game.deck_size,
        "deck_patches": game.unseen,
        "discarded": game.discarded,
        "stars": {"squares": list(game.rules.star_squares),
                  "patches": list(game.rules.starred_patches)},
        "final": final_breakdown(game) if game.is_over else None,
    }
