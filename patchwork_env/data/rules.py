"""Rule sets: every number of the rules that a variant may change, as data.

The engine reads nothing but a :class:`Rules`; three named presets cover the rules document
of this project and the two published editions.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

BOARD_SIZE = 9
"""Quilts are 9x9; the action space is built on it, so it is not a rule parameter."""


@dataclass(frozen=True)
class Rules:
    """The numbers of a Patchwork rule set."""

    leather_positions: tuple[int, ...] = (20, 26, 32, 38, 44)
    """Spaces of the time track holding a 1x1 leather patch at the start."""
    income_positions: tuple[int, ...] = (5, 11, 17, 23, 29, 35, 41, 47, 53)
    """Spaces that pay each player crossing them his income."""
    track_end: int = 53
    """The last space of the time track; the game ends when both tokens stand on it."""
    start_buttons: int = 5
    """Buttons each player starts with."""
    bonus_size: int = 7
    """Side of the square whose full coverage wins the bonus tile."""
    bonus_points: int = 7
    """Points the bonus tile is worth at the end."""

    def __post_init__(self) -> None:
        for name in ("leather_positions", "income_positions"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        for name in ("track_end", "start_buttons", "bonus_size", "bonus_points"):
            if not isinstance(getattr(self, name), int) or isinstance(getattr(self, name), bool):
                raise TypeError(f"Rules.{name} must be an int, got {getattr(self, name)!r}")
        if not 1 <= self.track_end <= 120:
            raise ValueError(f"Rules.track_end must be in 1..120, got {self.track_end}")
        for name in ("leather_positions", "income_positions"):
            spaces = getattr(self, name)
            if any(not isinstance(x, int) or isinstance(x, bool) for x in spaces):
                raise TypeError(f"Rules.{name} must hold ints, got {spaces!r}")
            if list(spaces) != sorted(set(spaces)):
                raise ValueError(f"Rules.{name} must be strictly increasing, got {spaces}")
            if spaces and not (spaces[0] >= 1 and spaces[-1] <= self.track_end):
                raise ValueError(
                    f"Rules.{name} must lie on spaces 1..{self.track_end}, got {spaces}"
                )
        if len(self.leather_positions) > 16:
            raise ValueError("Rules.leather_positions holds at most 16 spaces")
        if not 0 <= self.start_buttons <= 1000:
            raise ValueError(f"Rules.start_buttons must be in 0..1000, got {self.start_buttons}")
        if not 1 <= self.bonus_size <= BOARD_SIZE:
            raise ValueError(f"Rules.bonus_size must be in 1..{BOARD_SIZE}, got {self.bonus_size}")
        if not 0 <= self.bonus_points <= 1000:
            raise ValueError(f"Rules.bonus_points must be in 0..1000, got {self.bonus_points}")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the form used by the test vectors)."""
        d = asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Rules:
        """Build rules from :meth:`to_dict` output; unknown keys are an error."""
        if not isinstance(d, dict):
            raise TypeError(f"rules must be a dict, got {type(d).__name__}")
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown rules keys: {sorted(unknown)}")
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()})


PRESETS: dict[str, Rules] = {
    "default": Rules(),
    "revised": Rules(leather_positions=(26, 32, 38, 44, 50)),
    "classic": Rules(leather_positions=(20, 26, 32, 44, 50)),
}
"""Named rule sets: this project's default and the two published leather layouts."""


def get_rules(rules: str | Rules | dict[str, Any]) -> Rules:
    """Resolve a preset name, a rules dict or a :class:`Rules` to a :class:`Rules`."""
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, str):
        try:
            return PRESETS[rules]
        except KeyError:
            raise ValueError(
                f"unknown rules preset {rules!r}; choose one of {sorted(PRESETS)}"
            ) from None
    if isinstance(rules, dict):
        return Rules.from_dict(rules)
    raise TypeError(f"rules must be a preset name, a dict or a Rules, got {type(rules).__name__}")
