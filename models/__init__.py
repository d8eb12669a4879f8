"""The models shipped with patchwork-env, as package data (``ppo.pt``: see README.md here).

Nothing to import: the files are found with ``importlib.resources``, e.g.
``importlib.resources.files("patchwork_env.models") / "ppo.pt"``.
"""
