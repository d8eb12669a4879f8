"""What the single-game environments share: the live game they play and the copy of it
they show their users."""

from __future__ import annotations

from patchwork_env.views.game import Game


class PlaysOneGame:
    """A mixin for an environment that plays one :class:`~.game.Game` at a time, set by
    its ``reset`` into ``_game``."""

    _game: Game | None = None

    @property
    def game(self) -> Game:
        """A copy of the current position."""
        return self._live().copy()

    def _live(self) -> Game:
        """The game being played; ``RuntimeError`` before the first ``reset``."""
        if self._game is None:
            raise RuntimeError("call reset() before using the environment")
        return self._game
