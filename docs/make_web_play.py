"""Draw docs/web_play.png and docs/web_play_draft.png: the page of ``patchwork-play
--web`` in a headless Chromium at 1280x720, some moves into a seeded game of Patchwork and
one of Patchwork Draft against greedy, a patch picked and held over a place where it fits.

The person's moves are greedy's too, played through the server's API; the pictures are
taken in the page. Needs the web extra, selenium and a Chromium with its chromedriver
(Debian: ``apt-get install chromium chromium-driver``).

    python docs/make_web_play.py [--out PATH] [--draft-out PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

from patchwork_env.agents import make
from patchwork_env.data.actions import ADVANCE, SLOT_STRIDE
from patchwork_env.files.atomic import atomic_path
from patchwork_env.views.draft_game import DraftGame
from patchwork_env.views.game import Game

SEED = 7
HUMAN_MOVES = {"patchwork": 9, "draft": 5}
"""The person's moves before each picture (then on, to the first turn with a patch to buy)."""
NEW = {"patchwork": Game.new, "draft": DraftGame.new}
OUT = Path(__file__).with_name("web_play.png")
DRAFT_NAME = "web_play_draft.png"


def api(site: str, path: str, body: dict | None = None) -> dict:
    """One request to the server's JSON API."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(site.rstrip("/") + path, data=data,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


def play_some_moves(site: str, kind: str) -> dict:
    """A game of ``kind`` against greedy, the person's first moves chosen by greedy too,
    up to a turn where the person can buy a patch."""
    me = make("greedy", SEED, game=kind)
    state = api(site, "/api/games", {"game": kind, "seed": SEED, "seat": 0,
                                     "opponent": "greedy"})
    played = 0
    while True:
        while state["agent_to_move"]:
            state = api(site, f"/api/games/{state['id']}/agent", {})
        if played >= HUMAN_MOVES[kind] and any(a < ADVANCE for a in state["legal"]):
            return state
        game = NEW[kind](SEED)
        for move in state["moves"]:
            game.step(move["action"])
        state = api(site, f"/api/games/{state['id']}/move", {"action": me.act_game(game)})
        played += 1


def picture(browser: Any, site: str, kind: str, out: Path) -> dict:
    """Take the picture of a game of ``kind`` some moves in, a patch held over the quilt."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    state = play_some_moves(site, kind)
    browser.get(f"{site}?{kind}#game={state['id']}")
    WebDriverWait(browser, 30).until(
        lambda b: b.execute_script("return document.body.dataset.turn") == "human")
    slot = max(a // SLOT_STRIDE for a in state["legal"] if a < ADVANCE)
    browser.find_element(By.CSS_SELECTOR, f".card[data-slot='{slot}']").click()
    browser.find_element(By.ID, "rotate").click()
    dots = browser.find_elements(By.CSS_SELECTOR, "#overlay .dot")
    ActionChains(browser, duration=0).move_to_element(dots[len(dots) // 2]).perform()
    with atomic_path(out) as tmp:
        Path(tmp).write_bytes(browser.get_screenshot_as_png())
    return state


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="the picture (default: %(default)s)")
    parser.add_argument("--draft-out", type=Path, default=None,
                        help=f"the draft's picture (default: {DRAFT_NAME} beside --out)")
    args = parser.parse_args()
    draft_out = args.draft_out or args.out.with_name(DRAFT_NAME)
    from patchwork_env.web.browser import NoBrowser, headless_chromium

    try:
        from patchwork_env.web.app import create_app
        from patchwork_env.web.server import background
        browser = headless_chromium(1280, 720)
    except (ImportError, NoBrowser) as e:
        sys.exit(f"error: {e}")
    try:
        with background(create_app(opponent="greedy")) as site:
            for kind, out in (("patchwork", args.out), ("draft", draft_out)):
                state = picture(browser, site, kind, out)
                print(f"{kind}: {len(state['moves'])} moves in; wrote {out}")
    finally:
        browser.quit()


if __name__ == "__main__":
    main()
