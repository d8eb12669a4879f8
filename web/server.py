"""Run the web application with uvicorn: in the foreground for ``patchwork-play --web``
(:func:`serve`), or in a background thread for tests and scripts (:func:`background`).

Bound to a loopback address, the server answers only requests addressed to a loopback
name, so that a web page elsewhere cannot reach it through a name it controls.
"""

from __future__ import annotations

import socket
import threading
import time
import webbrowser
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

LOOPBACK = ("127.0.0.1", "localhost", "::1")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
"""The ``Host`` headers a loopback-bound server answers."""
INSTALL_HINT = 'the web page needs the web extra: pip install -e ".[web]"'


class MissingExtra(RuntimeError):
    """Starlette or uvicorn is not installed."""


def require_web_extra() -> None:
    """Raise :class:`MissingExtra` (one line saying how to install it) unless the ``web``
    extra's packages import."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as e:
        raise MissingExtra(f"{INSTALL_HINT} ({e.name} is missing)") from None


def address(host: str, port: int) -> str:
    """The page's URL."""
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


def check_free(host: str, port: int) -> None:
    """``OSError`` in one line unless this machine can serve on ``host:port``."""
    try:
        family, kind, proto, _, where = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(where)
    except OSError as e:
        raise OSError(f"cannot serve on {host}:{port}: {e.strerror or e}") from None


def _say(text: str) -> None:
    print(text, flush=True)


def _server(app: Any, host: str, port: int) -> Any:
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
    return uvicorn.Server(config)


def serve(host: str = "127.0.0.1", port: int = 8000, *, open_browser: bool = True,
          say: Callable[[str], None] | None = None, **app_options: Any) -> None:
    """Serve the page on ``host:port`` until interrupted, printing its address (and
    opening it in a browser when ``open_browser``); ``app_options`` go to
    :func:`~patchwork_env.web.app.create_app`."""
    require_web_extra()
    from patchwork_env.web.app import create_app

    check_free(host, port)
    hosts = list(LOOPBACK_HOSTS) if host in LOOPBACK else None
    server = _server(create_app(allowed_hosts=hosts, **app_options), host, port)
    url = address(host, port)

    def announce() -> None:
        while not server.started and not server.should_exit:
            time.sleep(0.05)
        if server.started:
            (say or _say)(f"Playing at {url} (Ctrl-C stops the server)")
            if open_browser:
                webbrowser.open(url)

    threading.Thread(target=announce, daemon=True).start()
    try:
        server.run()
    except SystemExit:  # uvicorn's answer to an address it cannot bind
        raise OSError(f"cannot serve on {host}:{port} (is the port in use?)") from None


@contextmanager
def background(app: Any, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve ``app`` from a thread while the block runs; yields the page's URL (``port``
    0: a free port)."""
    server = _server(app, host, port)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise OSError(f"the web server did not start on {host}:{port}")
        time.sleep(0.02)
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield address(host, bound)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
