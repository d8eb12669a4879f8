"""Rule sets: every number of the rules that a variant may change, as data.

Section 9 of the rules page (docs/rules.md): the engine reads nothing but a :class:`Rules`
(rule 9.1); three named presets cover this project's rules and the leather layouts of two
published editions (rule 9.2); a custom rule set is checked field by field (rule 9.3).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

BOARD_SIZE = 9
"""Quilts are 9x9; the action space is built on it, so it is not a rule parameter."""


@dataclass(frozen=True)
class Rules:
    """The numbers of a Patchwork rule set (rule 9.1 (docs/rules.md))."""

    leather_positions: tuple[int, ...] = (20, 26, 32, 38, 44)
    """Spaces of the time track holding a 1x1 leather patch at the start (rule 6.5)."""
    income_positions: tuple[int, ...] = (5, 11, 17, 23, 29, 35, 41, 47, 53)
    """Spaces that pay each player crossing them the player's income (rules 6.2, 6.4)."""
    track_end: int = 53
    """The last space of the time track (rule 6.1); the game ends when both tokens stand
    on it (rule 8.1)."""
    start_buttons: int = 5
    """Buttons each player starts with (rule 2.2)."""
    bonus_size: int = 7
    """Side of the square whose full coverage wins the bonus tile (rule 7.1)."""
    bonus_points: int = 7
    """Points the bonus tile is worth at the end (rule 8.2)."""

    def __post_init__(self) -> None:
        """Rule 9.3: refuse a field outside its limits, by name."""
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
"""Named rule sets (rule 9.2): this project's default and two published leather layouts."""


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
