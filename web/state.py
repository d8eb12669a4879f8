"""What the page draws, as JSON: the patches once (:func:`catalogue`), then each position
(:func:`position`).

The page holds no rules: the position lists the legal actions the server computed, and the
catalogue gives each patch's eight orientations with the lowest orientation of the same
shape (the one a move names, rule 11.2), so the page can find the legal action of a
placement it draws.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from patchwork_env.data.actions import ADVANCE
from patchwork_env.data.patches import LEATHER_ID, N_ORIENTATIONS, PATCHES, Patch
from patchwork_env.data.rules import BOARD_SIZE, PRESETS
from patchwork_env.views.render_common import (
    LEATHER_COLOR,
    PATCH_COLORS,
    PLAYER_COLORS,
    RGB,
    leather_on_track,
    quilt_ids,
    status_text,
)
from patchwork_env.web.games import Session


def css_color(rgb: RGB) -> str:
    """``(r, g, b)`` as ``#rrggbb``."""
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def _patch_json(patch: Patch, color: RGB) -> dict[str, Any]:
    return {"id": patch.id, "cost": patch.cost, "time": patch.time, "income": patch.income,
            "color": css_color(color),
            "orientations": [{"cells": [list(rc) for rc in patch.oriented(o)],
                              "canonical": patch.canonical(o)}
                             for o in range(N_ORIENTATIONS)]}


@cache
def catalogue() -> dict[str, Any]:
    """The patches (shapes in every orientation, figures, colours), the leather patch's id
    and colour, the players' colours and the rules presets."""
    return {"board_size": BOARD_SIZE,
            "patches": [_patch_json(p, PATCH_COLORS[p.id]) for p in PATCHES],
            "leather": {"id": LEATHER_ID, "color": css_color(LEATHER_COLOR)},
            "player_colors": [css_color(c) for c in PLAYER_COLORS],
            "rules": {name: {"leather_positions": list(r.leather_positions),
                             "income_positions": list(r.income_positions),
                             "track_end": r.track_end}
                      for name, r in PRESETS.items()}}


def final_breakdown(session: Session) -> list[dict[str, int]]:
    """Each player's score in parts: buttons, empty cells (two points off each), the bonus
    tile, and the total (equal to the game's score)."""
    game = session.game
    scores = game.scores()
    rows = []
    for p in (0, 1):
        empty = BOARD_SIZE * BOARD_SIZE - len(game.quilt_cells(p))
        bonus = game.rules.bonus_points if game.bonus_owner == p else 0
        rows.append({"buttons": game.buttons[p], "empty_cells": empty,
                     "empty_penalty": -2 * empty, "bonus": bonus, "total": scores[p]})
    return rows


def position(session: Session) -> dict[str, Any]:
    """The whole state of ``session`` as the page shows it: what both games share, then
    what its kind adds (:func:`patchwork_details`, or the draft's)."""
    game, spec = session.game, session.opponent
    legal = game.legal_actions().tolist()
    over = game.is_over
    return {
        "id": session.id, "game": session.kind.name, "seed": session.seed,
        "seat": session.seat, "opponent": spec, "rules": session.rules,
        "to_move": game.to_move, "over": over, "winner": game.winner,
        "agent_to_move": session.agent_to_move, "thinking": session.thinking,
        "legal": legal if not session.agent_to_move else [],
        "moves": [m.to_json() for m in session.moves],
        "can_undo": bool(session.undo_points),
        **session.kind.details(session),
    }


def patchwork_details(session: Session) -> dict[str, Any]:
    """What a Patchwork position adds: the players' figures and quilts, the time track,
    the circle, the bonus tile, pending leather patches and the final breakdown."""
    game, spec = session.game, session.opponent
    scores = game.scores()
    ids = quilt_ids(game)
    players = [{"name": "you" if p == session.seat else spec,
                "human": p == session.seat,
                "buttons": game.buttons[p], "income": game.income[p],
                "position": game.position[p], "score": scores[p],
                "quilt": ids[p].tolist()} for p in (0, 1)]
    return {
        "status": status_text(game, scores),
        "pending_leather": game.pending_leather,
        "players": players,
        "bonus_owner": game.bonus_owner, "bonus_size": game.rules.bonus_size,
        "bonus_points": game.rules.bonus_points,
        "first_to_finish": game.first_to_finish,
        "track": {"end": game.rules.track_end,
                  "income": list(game.rules.income_positions),
                  "leather": leather_on_track(game)},
        "circle": game.circle,
        "advance_gain": (game.advance_buttons() if ADVANCE in game.legal_actions().tolist()
                         else None),
        "final": final_breakdown(session) if game.is_over else None,
    }
