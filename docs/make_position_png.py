"""Draw docs/position.png: a seeded game some 20 moves in, as render_rgb draws it.

Each move buys a random affordable patch when one fits, packing it towards the top-left
corner of the quilt the way people tend to sew, and advances otherwise; leather patches
go on the first empty cell.

    python docs/make_position_png.py [--out PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from PIL import Image

from patchwork_env import ADVANCE, LEATHER_BASE, Game
from patchwork_env.data.actions import SLOT_STRIDE
from patchwork_env.files.atomic import atomic_path
from patchwork_env.views.render import render_rgb

SEED = 7
MOVES = 20
OUT = Path(__file__).with_name("position.png")


def choose(game: Game, rng: np.random.Generator) -> int:
    """A plausible move: a packed placement of a random buyable patch, else advance."""
    legal = game.legal_actions()
    if legal[0] >= LEATHER_BASE:
        return int(legal[0])
    buys = legal[legal < ADVANCE]
    if len(buys) == 0:
        return ADVANCE
    slot = rng.choice(np.unique(buys // SLOT_STRIDE))
    options = buys[buys // SLOT_STRIDE == slot]
    return int(min(options, key=lambda a: sum(sum(divmod(c, 9)) for c in game.action_cells(a))))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="the picture (default: %(default)s)")
    args = parser.parse_args()
    rng = np.random.default_rng(SEED)
    game = Game.new(seed=SEED)
    for _ in range(MOVES):
        game.step(choose(game, rng))
    with atomic_path(args.out) as tmp:
        Image.fromarray(render_rgb(game)).save(tmp)
    print(game)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
