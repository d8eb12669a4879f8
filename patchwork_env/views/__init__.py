"""Layer 3, views: what an agent observes, the pictures of a position (text and RGB), and
:class:`~patchwork_env.views.game.Game`, one game with its picture as ``str(game)``."""
