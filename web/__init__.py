"""Play against the agents in a browser, Patchwork or Patchwork Draft: a small web server
holding each game, and the page.

``patchwork-play --web`` starts it (:func:`patchwork_env.web.server.serve`);
:func:`patchwork_env.web.app.create_app` builds the application, whose JSON API the
module :mod:`patchwork_env.web.app` describes. The server needs the ``web`` extra
(``pip install -e ".[web]"``): Starlette and uvicorn.
"""
