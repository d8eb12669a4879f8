"""The page in a real browser: a headless Chromium plays by clicks against the server.

Skipped, saying what is missing, where no Chromium, chromedriver or selenium is installed
(Debian: ``apt-get install chromium chromium-driver``; ``pip install selenium``), unless
``PATCHWORK_WEB_TESTS=require`` (as in CI), where that is an error.
"""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the web extra is not installed")
pytest.importorskip("uvicorn", reason="the web extra is not installed")

from patchwork_env.data.actions import ADVANCE, LEATHER_BASE, N_CELLS, SLOT_STRIDE
from patchwork_env.web.app import create_app
from patchwork_env.web.browser import NoBrowser, find_chromium, headless_chromium
from patchwork_env.web.server import background

try:
    find_chromium()
except NoBrowser as e:
    if os.environ.get("PATCHWORK_WEB_TESTS") == "require":  # CI: they must run
        raise
    pytest.skip(f"no headless browser: {e}", allow_module_level=True)

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

WAIT_S = 20


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with background(create_app(opponent="random", seed=2)) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chrome = headless_chromium(1280, 720)
    yield chrome
    chrome.quit()


def api(site: str, path: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(site.rstrip("/") + path, data=data,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=WAIT_S) as answer:
        return json.loads(answer.read())


def page_state(browser: Any) -> tuple[str, int]:
    """Whose turn the page shows (human, agent, over) and how many moves it lists."""
    turn, ply = browser.execute_script(
        "return [document.body.dataset.turn, document.body.dataset.ply]")
    return turn, int(ply or -1)


def settled(browser: Any, more_than: int = -1) -> tuple[str, int]:
    """Wait until the page waits for the person (or the game is over), past move
    ``more_than``."""
    def ready(b: Any) -> tuple[str, int] | bool:
        turn, ply = page_state(b)
        return (turn, ply) if turn in ("human", "over") and ply > more_than else False
    return WebDriverWait(browser, WAIT_S, poll_frequency=0.02).until(ready)


def game_id(browser: Any) -> str:
    return browser.execute_script("return ui.state.id")


def open_game(browser: Any, site: str, gid: str) -> None:
    browser.get(f"{site}?{gid}#game={gid}")
    settled(browser)


def cell(browser: Any, index: int) -> Any:
    return browser.find_element(
        By.CSS_SELECTOR, f"#my-quilt > g:first-of-type > rect:nth-of-type({index + 1})")


def hover(browser: Any, index: int) -> Any:
    ActionChains(browser, duration=0).move_to_element(cell(browser, index)).perform()
    return browser.find_element(By.CSS_SELECTOR, "#overlay .ghost")


def click_cell(browser: Any, index: int) -> None:
    ActionChains(browser, duration=0).move_to_element(cell(browser, index)).click().perform()


def pointer_cell(anchor: int, shape: list[list[int]]) -> int:
    """The cell to point at to put a patch of ``shape`` at ``anchor``: the page centres
    the patch on the pointer."""
    height, width = (1 + max(rc[i] for rc in shape) for i in (0, 1))
    return anchor + (height - 1) // 2 * 9 + (width - 1) // 2


def play_by_clicks(browser: Any, action: int, shapes: list[list[list[int]]]) -> None:
    """The person's ``action``, played with the mouse (``shapes``: the offered patches'
    cells in each orientation): one chain of clicks, sent at once."""
    if action == ADVANCE:
        browser.find_element(By.ID, "advance").click()
        return
    if action >= LEATHER_BASE:
        click_cell(browser, action - LEATHER_BASE)
        return
    slot, code = divmod(action, SLOT_STRIDE)
    orientation, anchor = divmod(code, N_CELLS)
    chain = ActionChains(browser, duration=0).click(
        browser.find_element(By.CSS_SELECTOR, f".card[data-slot='{slot}']"))
    if orientation >= 4:
        chain.click(browser.find_element(By.ID, "mirror"))
    for _ in range(orientation % 4):
        chain.click(browser.find_element(By.ID, "rotate"))
    target = cell(browser, pointer_cell(anchor, shapes[slot][orientation]))
    chain.move_to_element(target).click().perform()


def test_a_whole_game_against_random_is_played_by_clicks(browser: Any, site: str) -> None:
    browser.get(site)
    settled(browser)
    browser.find_element(By.ID, "seed").clear()
    browser.find_element(By.ID, "seed").send_keys("8")
    browser.find_element(By.CSS_SELECTOR, "#seat option[value='1']").click()
    browser.find_element(By.ID, "new").click()
    WebDriverWait(browser, WAIT_S).until(lambda b: b.execute_script(
        "return ui.state && ui.state.seed === 8"))
    turn, ply = settled(browser)
    gid, rng = game_id(browser), np.random.default_rng(0)
    patches = api(site, "/api/catalogue")["patches"]
    played = []
    while turn != "over":
        state = api(site, f"/api/games/{gid}")
        buys = [a for a in state["legal"] if a < ADVANCE]
        action = int(rng.choice(buys if buys and rng.random() < 0.8 else state["legal"]))
        shapes = [[o["cells"] for o in patches[p]["orientations"]] for p in state["circle"][:3]]
        play_by_clicks(browser, action, shapes)
        played.append(action)
        turn, ply = settled(browser, ply)
    state = api(site, f"/api/games/{gid}")
    assert state["over"] and state["seat"] == 1 and ply == len(state["moves"])
    assert [m["action"] for m in state["moves"] if not m["by_agent"]] == played
    totals = browser.find_elements(By.CSS_SELECTOR, "#final td.total")
    assert [int(t.text) for t in totals] == [p["score"] for p in state["players"]]
    listed = browser.find_elements(By.CSS_SELECTOR, "#moves li")
    assert [li.text.split(": ", 1)[1] for li in listed] == [m["text"] for m in state["moves"]]


def human_with_a_patch_sewn(site: str, seed: int) -> dict:
    """A game (through the API) where the person has sewn a patch on and can buy another."""
    def agent(state: dict) -> dict:
        while state["agent_to_move"]:
            state = api(site, f"/api/games/{state['id']}/agent", {})
        return state
    state = agent(api(site, "/api/games", {"seed": seed, "opponent": "random"}))
    state = agent(api(site, f"/api/games/{state['id']}/move",
                      {"action": min(a for a in state["legal"] if a < ADVANCE)}))
    assert any(a < ADVANCE for a in state["legal"]), "the person cannot buy a second patch"
    return state


def test_an_illegal_placement_is_refused_with_the_reason(browser: Any, site: str) -> None:
    state = human_with_a_patch_sewn(site, seed=3)
    open_game(browser, site, state["id"])
    slot = next(a // SLOT_STRIDE for a in state["legal"] if a < ADVANCE)
    browser.find_element(By.TAG_NAME, "body").send_keys(str(slot + 1))
    illegal = next(i for i in range(N_CELLS) if hover(browser, i).get_attribute("data-legal")
                   == "false")
    click_cell(browser, illegal)
    message = WebDriverWait(browser, WAIT_S).until(
        lambda b: b.find_element(By.CSS_SELECTOR, "#message.error").text)
    assert "Refused" in message and "overlaps your quilt" in message
    assert page_state(browser) == ("human", len(state["moves"]))
    assert api(site, f"/api/games/{state['id']}")["moves"] == state["moves"]


def test_keys_turn_and_mirror_the_chosen_patch(browser: Any, site: str) -> None:
    state = human_with_a_patch_sewn(site, seed=3)
    open_game(browser, site, state["id"])
    slot = next(a // SLOT_STRIDE for a in state["legal"] if a < ADVANCE)
    body = browser.find_element(By.TAG_NAME, "body")
    quilt = lambda: browser.find_element(By.ID, "my-quilt")  # noqa: E731
    seen = []
    for key in (str(slot + 1), "r", "r", "e", "f", Keys.ESCAPE):
        body.send_keys(key)
        seen.append(quilt().get_attribute("data-orientation"))
    assert seen == ["0", "1", "2", "1", "7", "0"]
    assert not browser.find_elements(By.CSS_SELECTOR, ".card.selected")


def test_undo_takes_back_the_persons_move_and_the_reply(browser: Any, site: str) -> None:
    state = human_with_a_patch_sewn(site, seed=5)
    open_game(browser, site, state["id"])
    browser.find_element(By.ID, "undo").click()
    WebDriverWait(browser, WAIT_S).until(lambda b: page_state(b)[1] < len(state["moves"]))
    back = api(site, f"/api/games/{state['id']}")
    assert not back["can_undo"] and all(m["by_agent"] for m in back["moves"])
    assert page_state(browser) == ("human", len(back["moves"]))


@pytest.mark.parametrize("size", [(1280, 720), (400, 800)])
def test_the_page_fits_the_window_width(browser: Any, site: str, size: tuple[int, int]) -> None:
    state = human_with_a_patch_sewn(site, seed=3)
    browser.set_window_size(*size)
    try:
        open_game(browser, site, state["id"])
        width, inner = browser.execute_script(
            "return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width <= inner
        quilt = browser.find_element(By.ID, "my-quilt").rect
        assert quilt["width"] >= 150 and quilt["x"] >= 0
    finally:
        browser.set_window_size(1280, 720)


def test_a_whole_draft_game_against_random_is_played_by_clicks(browser: Any, site: str) -> None:
    browser.get(site)
    settled(browser)
    browser.find_element(By.CSS_SELECTOR, "#game option[value='draft']").click()
    presets = [o.text for o in browser.find_elements(By.CSS_SELECTOR, "#rules option")]
    assert presets == ["default", "no-stars"]
    browser.find_element(By.ID, "seed").clear()
    browser.find_element(By.ID, "seed").send_keys("4")
    browser.find_element(By.ID, "new").click()
    WebDriverWait(browser, WAIT_S).until(lambda b: b.execute_script(
        "return ui.state && ui.state.game === 'draft' && ui.state.seed === 4"))
    turn, ply = settled(browser)
    gid, rng = game_id(browser), np.random.default_rng(1)
    patches = api(site, "/api/catalogue")["patches"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "#my-quilt .star")) == 5
    assert not browser.find_element(By.ID, "advance").is_displayed()
    played, discarded = [], 0
    while turn != "over":
        state = api(site, f"/api/games/{gid}")
        assert browser.find_element(By.CSS_SELECTOR, "#rest .deck").text == (
            f"deck: {state['deck_size']} face down")
        action = int(rng.choice(state["legal"]))
        if action >= ADVANCE:  # a discard: offered only when nothing can be bought
            assert all(a >= ADVANCE for a in state["legal"])
            browser.find_element(
                By.CSS_SELECTOR, f".card[data-slot='{action - ADVANCE}'] .discard").click()
            discarded += 1
        else:
            assert not browser.find_elements(By.CSS_SELECTOR, ".card .discard")
            shapes = [[o["cells"] for o in patches[p]["orientations"]] if p is not None else []
                      for p in state["face_up"]]
            play_by_clicks(browser, action, shapes)
        played.append(action)
        turn, ply = settled(browser, ply)
    state = api(site, f"/api/games/{gid}")
    assert discarded, "the game had no discard to click"
    assert state["over"] and [m["action"] for m in state["moves"] if not m["by_agent"]] == played
    totals = browser.find_elements(By.CSS_SELECTOR, "#final td.total")
    assert [int(t.text) for t in totals] == [p["score"] for p in state["players"]]
    stars = browser.find_elements(By.CSS_SELECTOR, "#final td.star_points")
    assert [int(t.text) for t in stars] == [part["star_points"] for part in state["final"]]
    listed = browser.find_elements(By.CSS_SELECTOR, "#moves li")
    assert [li.text.split(": ", 1)[1] for li in listed] == [m["text"] for m in state["moves"]]
