"""Draw docs/web_play.png: the page of ``patchwork-play --web`` in a headless Chromium at
1280x720, some moves into a seeded game against greedy, a patch picked and held over a
place where it fits.

The person's moves are greedy's too, played through the server's API; the picture is taken
in the page. Needs the web extra, selenium and a Chromium with its chromedriver (Debian:
``apt-get install chromium chromium-driver``).

    python docs/make_web_play.py [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from pathlib import Path

from patchwork_env.agents import make
from patchwork_env.data.actions import ADVANCE, SLOT_STRIDE
from patchwork_env.files.atomic import atomic_path
from patchwork_env.views.game import Game

SEED = 7
HUMAN_MOVES = 9
OUT = Path(__file__).with_name("web_play.png")


def api(site: str, path: str, body: dict | None = None) -> dict:
    """One request to the server's JSON API."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(site.rstrip("/") + path, data=data,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


def play_some_moves(site: str) -> dict:
    """A game against greedy, the person's first moves chosen by greedy too."""
    me = make("greedy", SEED)
    state = api(site, "/api/games", {"seed": SEED, "seat": 0, "opponent": "greedy"})
    for _ in range(HUMAN_MOVES):
        while state["agent_to_move"]:
            state = api(site, f"/api/games/{state['id']}/agent", {})
        game = Game.new(SEED)
        for move in state["moves"]:
            game.step(move["action"])
        state = api(site, f"/api/games/{state['id']}/move", {"action": me.act_game(game)})
    while state["agent_to_move"]:
        state = api(site, f"/api/games/{state['id']}/agent", {})
    return state


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="the picture (default: %(default)s)")
    args = parser.parse_args()
    from patchwork_env.web.browser import NoBrowser, headless_chromium

    try:
        from patchwork_env.web.app import create_app
        from patchwork_env.web.server import background
        browser = headless_chromium(1280, 720)
    except (ImportError, NoBrowser) as e:
        sys.exit(f"error: {e}")
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        with background(create_app(opponent="greedy")) as site:
            state = play_some_moves(site)
            browser.get(f"{site}#game={state['id']}")
            WebDriverWait(browser, 30).until(
                lambda b: b.execute_script("return document.body.dataset.turn") == "human")
            slot = max(a // SLOT_STRIDE for a in state["legal"] if a < ADVANCE)
            browser.find_element(By.CSS_SELECTOR, f".card[data-slot='{slot}']").click()
            browser.find_element(By.ID, "rotate").click()
            dots = browser.find_elements(By.CSS_SELECTOR, "#overlay .dot")
            ActionChains(browser, duration=0).move_to_element(dots[len(dots) // 2]).perform()
            with atomic_path(args.out) as tmp:
                Path(tmp).write_bytes(browser.get_screenshot_as_png())
    finally:
        browser.quit()
    print(f"{len(state['moves'])} moves in; wrote {args.out}")


if __name__ == "__main__":
    main()
