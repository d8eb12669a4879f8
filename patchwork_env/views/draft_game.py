"""DraftGame: one game of Patchwork Draft, a thin view over a :class:`DraftBatch` of one.

The draft's counterpart of :class:`~patchwork_env.views.game.Game`, with the same API:
``new``, ``legal_actions``, ``legal_mask``, ``step`` (in place), ``copy``, ``is_over``,
``scores``, ``winner``, ``state_dict`` / ``from_dict``. Every move runs the batch engine's
compiled draft rules (section 13 of docs/rules.md) on a one-game state array.

>>> g = DraftGame.new(seed=0, first_player=0)
>>> g.to_move
0
>>> g.step(g.legal_actions()[0])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from patchwork_env.data.actions import SLOT_STRIDE, cell_name
from patchwork_env.data.draft_actions import (
    DISCARD_BASE,
    N_DRAFT_ACTIONS,
    check_draft_action_id,
)
from patchwork_env.data.draft_rules import DraftRules
from patchwork_env.data.patches import N_PATCHES, PATCHES
from patchwork_env.data.rules import BOARD_SIZE
from patchwork_env.data.tables import PLACEMENT_MASKS, words_to_cells
from patchwork_env.data.validation import check_seed
from patchwork_env.engine import draft_kernels as dk
from patchwork_env.engine.draft_batch import DraftBatch, draft_random_setup
from patchwork_env.engine.draft_batch_kernels import checked_step_one, legal_actions_one
from patchwork_env.engine.draft_serialize import (
    UNKNOWN_PATCH,
    draft_state_from_dict,
    draft_state_to_dict,
)
from patchwork_env.views.one_game import OneGame

PATCH_MARKS = "0123456789ABCDEFGHIJKLMNOPQRSTUVW"
"""The character that shows patch ``id`` on a quilt in :meth:`DraftGame.__str__`."""

_WIDTH = 24
"""Characters per quilt column in :meth:`DraftGame.__str__`."""


class DraftGame(OneGame):
    """One game of Patchwork Draft."""

    __slots__ = ()
    batch_type = DraftBatch
    n_actions = N_DRAFT_ACTIONS
    kernels = dk
    legal_actions_one = legal_actions_one
    checked_step_one = checked_step_one
    state_to_dict = staticmethod(draft_state_to_dict)

    @classmethod
    def new(cls, seed: int | None = None, *, deck: Any = None, first_player: int | None = None,
            rules: str | DraftRules = "default") -> DraftGame:
        """A new game (rule 13.1): the deck order and first player drawn from ``seed``
        unless given. ``deck`` lists all 33 patch ids: the three face-up ones (slots 0, 1,
        2), then the face-down deck from the top."""
        seed = check_seed(seed)
        deck, first_player = draft_random_setup(np.random.default_rng(seed), deck, first_player)
        return cls(DraftBatch.from_setups([deck], [first_player], rules, seed=seed))

    @classmethod
    def from_dict(cls, d: dict[str, Any], rules: str | DraftRules | None = None) -> DraftGame:
        """Rebuild a game from :meth:`state_dict` output; a state no draft game can reach is
        refused with ``ValueError`` (``TypeError`` for a value of the wrong kind) naming the
        fields (:mod:`patchwork_env.engine.draft_serialize` lists the checks)."""
        state, resolved = draft_state_from_dict(d, rules)
        return cls(DraftBatch(state, resolved))

    # ----- reading the position -------------------------------------------------------
    @property
    def first_player(self) -> int:
        """The player who took the first turn (the other one wins ties, rule 13.8)."""
        return int(self._state[0]["first_player"])

    @property
    def points(self) -> tuple[int, int]:
        """Row, column and star points of each player (rules 13.4, 13.5)."""
        return tuple(self._state[0]["points"].tolist())

    @property
    def face_up(self) -> list[int | None]:
        """The patch id in each slot of the face-up row (None: emptied at the end)."""
        return [None if x < 0 else x for x in self._state[0]["row"].tolist()]

    @property
    def deck_size(self) -> int:
        """How many patches the face-down deck holds."""
        return N_PATCHES - int(self._state[0]["drawn"])

    @property
    def unseen(self) -> list[int]:
        """The patches in the face-down deck, sorted: public, unlike their order."""
        return sorted(self._state[0]["deck"][int(self._state[0]["drawn"]):].tolist())

    @property
    def discarded(self) -> list[int]:
        """The patches discarded from the game (rule 13.6), sorted: those neither face up,
        nor in the deck, nor on a quilt."""
        ids = self._state[0]["cell_patches"]
        kept = set(self.unseen) | set(self.face_up) | set(ids[ids >= 0].tolist())
        return [x for x in range(N_PATCHES) if x not in kept]

    # ----- moving --------------------------------------------------------------------------
    def redeal(self, seed: int) -> DraftGame:
        """A copy with the face-down deck reshuffled from ``seed`` (see
        :meth:`DraftBatch.redeal`)."""
        return DraftGame(self._batch.redeal(seed))

    def action_cells(self, action: int) -> list[int]:
        """The cells a buy would cover on the mover's quilt (none for a discard)."""
        a = check_draft_action_id(action)
        if a >= DISCARD_BASE:
            return []
        slot, code = divmod(a, SLOT_STRIDE)
        patch = self.face_up[slot]
        if patch is None:
            raise ValueError(f"action {a}: slot {slot} of the row is empty")
        lo, hi = PLACEMENT_MASKS[patch, code]
        if lo == 0 and hi == 0:
            raise ValueError(f"action {a}: the patch would leave the board")
        return words_to_cells(int(lo), int(hi))

    # ----- text ------------------------------------------------------------------------------
    def __str__(self) -> str:
        """Both quilts side by side, buttons, points, scores, the row with costs, stars."""
        s = self._state[0]
        stars = set(self.rules.star_squares)
        if self.is_over:
            head = f"Patchwork Draft: over, player {self.winner} wins"
        else:
            head = f"Patchwork Draft: player {self.to_move} to move"
        lines = [f"{head} (player {self.first_player} moved first)", "",
                 "   " + "".join(f"player {p}".ljust(_WIDTH) for p in range(2)),
                 "   " + "a b c d e f g h i".ljust(_WIDTH) * 2]
        for r in range(BOARD_SIZE):
            cells = []
            for p in range(2):
                marks = []
                for c in range(r * BOARD_SIZE, (r + 1) * BOARD_SIZE):
                    pid = int(s["cell_patches"][p, c])
                    marks.append("#" if pid == UNKNOWN_PATCH else PATCH_MARKS[pid] if pid >= 0
                                 else "*" if c in stars else ".")
                cells.append(" ".join(marks))
            lines.append(f"{r + 1}  " + "".join(q.ljust(_WIDTH) for q in cells))
        for label, values in (("buttons", self.buttons), ("points", self.points),
                              ("score", self.scores())):
            lines.append("   " + "".join(f"{label} {v}".ljust(_WIDTH) for v in values))
        lines += ["", "face-up row:"]
        starred = set(self.rules.starred_patches)
        for slot, pid in enumerate(self.face_up):
            if pid is None:
                lines.append(f"  slot {slot}: empty")
                continue
            patch = PATCHES[pid]
            star = " star" if pid in starred else ""
            lines.append(f"  slot {slot}: patch {pid} ({PATCH_MARKS[pid]}) cost {patch.cost}"
                         f"{star}  {patch.shape}")
        lines.append(f"deck: {self.deck_size} face down")
        squares = ", ".join(cell_name(c) for c in sorted(stars)) or "none"
        lines.append(f"star squares (*): {squares}")
        return "\n".join(line.rstrip() for line in lines)

    def __repr__(self) -> str:
        return (f"DraftGame(to_move={self.to_move}, buttons={self.buttons}, "
                f"points={self.points}, face_up={self.face_up}, deck={self.deck_size})")


__all__ = ["PATCH_MARKS", "DraftGame"]
