"""A headless Chromium driven by Selenium, for the page's tests and the docs' screenshot.

Debian's ``chromium`` and ``chromium-driver`` packages (or any Chromium and its
``chromedriver``) and the ``selenium`` package are needed; :func:`find_chromium` says what
is missing in one line, so that a test can skip with that reason.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
DRIVERS = ("chromedriver",)


class NoBrowser(RuntimeError):
    """No Chromium, chromedriver or selenium on this machine."""


def _which(names: tuple[str, ...], variable: str) -> str | None:
    given = os.environ.get(variable)
    return given or next((path for name in names if (path := shutil.which(name))), None)


def find_chromium() -> tuple[str, str]:
    """``(browser, driver)`` paths (``$CHROMIUM``, ``$CHROMEDRIVER`` or on the ``PATH``);
    :class:`NoBrowser` naming what is missing."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        raise NoBrowser("selenium is not installed (pip install selenium)") from None
    browser = _which(BROWSERS, "CHROMIUM")
    driver = _which(DRIVERS, "CHROMEDRIVER")
    if browser is None or driver is None:
        missing = " and ".join(name for name, path in (("chromium", browser),
                                                        ("chromedriver", driver)) if not path)
        raise NoBrowser(f"no {missing} found (Debian: apt-get install chromium chromium-driver)")
    return browser, driver


def headless_chromium(width: int = 1280, height: int = 720) -> Any:
    """A Selenium driver of a headless Chromium whose page area is ``width`` x ``height``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver = find_chromium()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--hide-scrollbars", "--force-device-scale-factor=1",
                 f"--window-size={width},{height}"):
        options.add_argument(flag)
    chrome = webdriver.Chrome(options=options, service=Service(executable_path=driver))
    chrome.set_window_size(width, height)
    inner = chrome.execute_script("return [window.innerWidth, window.innerHeight]")
    chrome.set_window_size(2 * width - inner[0], 2 * height - inner[1])
    return chrome
