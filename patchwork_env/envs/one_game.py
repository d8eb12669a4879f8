"""What the single-game environments share: the live game they play, the copy of it they
show their users, and how they read one action."""

from __future__ import annotations

from typing import Any

from patchwork_env.data.validation import as_action, check_action
from patchwork_env.views.game import Game


def checked_action(action: Any) -> int:
    """One action as :func:`~patchwork_env.data.validation.check_action` reads it (an int
    or a numpy integer, a 0-d or one-element integer array), whose ``TypeError`` for a
    value of the wrong kind then names the value (as :func:`as_action` words it)."""
    try:
        return check_action(action)
    except TypeError:
        as_action(action)  # raises, naming the value
        raise


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
