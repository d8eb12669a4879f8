"""Rule sets of Patchwork Draft, the drafting variant: its numbers and its stars, as data.

Section 13 of the rules page (docs/rules.md): the buttons each player starts with
(rule 13.1), which patches carry a star and which quilt squares are star squares
(rule 13.5). A :class:`DraftRules` is checked field by field, like
:class:`~patchwork_env.data.rules.Rules` (rule 9.3); two presets exist, ``default`` and
``no-stars``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from patchwork_env.data.actions import N_CELLS, cell_name
from patchwork_env.data.patches import N_PATCHES, PATCHES
from patchwork_env.data.tables import cells_to_words

DEFAULT_STARRED_PATCHES = tuple(p.id for p in PATCHES if p.income >= 1)
"""Rule 13.5: by default the patches with buttons printed on them carry a star."""

DEFAULT_STAR_SQUARES = (10, 16, 40, 64, 70)
"""Rule 13.5: b2, h2, e5, b8 and h8, by default."""


@dataclass(frozen=True)
class DraftRules:
    """The numbers of a Patchwork Draft rule set (rules 13.1 and 13.5 (docs/rules.md))."""

    start_buttons: int = 5
    """Buttons each player starts with (rule 13.1)."""
    starred_patches: tuple[int, ...] = DEFAULT_STARRED_PATCHES
    """Ids of the patches that carry a star (rule 13.5), in increasing order."""
    star_squares: tuple[int, ...] = DEFAULT_STAR_SQUARES
    """Cells (0..80) of the quilt that are star squares (rule 13.5), in increasing order."""

    def __post_init__(self) -> None:
        """Rule 13.5: refuse a field outside its limits, by name."""
        value = self.start_buttons
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"DraftRules.start_buttons must be an int, got {value!r}")
        if not 0 <= value <= 1000:
            raise ValueError(f"DraftRules.start_buttons must be in 0..1000, got {value}")
        for name, limit in (("starred_patches", N_PATCHES), ("star_squares", N_CELLS)):
            items = getattr(self, name)
            if isinstance(items, str | bytes) or not hasattr(items, "__iter__"):
                raise TypeError(f"DraftRules.{name} must be a sequence of ints, got {items!r}")
            items = tuple(items)
            if any(not isinstance(x, int) or isinstance(x, bool) for x in items):
                raise TypeError(f"DraftRules.{name} must hold ints, got {items!r}")
            if any(not 0 <= x < limit for x in items):
                raise ValueError(f"DraftRules.{name} must lie in 0..{limit - 1}, got {items}")
            if len(set(items)) != len(items):
                raise ValueError(f"DraftRules.{name} repeats an entry: {items}")
            object.__setattr__(self, name, tuple(sorted(items)))

    @property
    def starred_bits(self) -> int:
        """The starred patches as one integer, bit ``id`` set for a starred patch."""
        return sum(1 << i for i in self.starred_patches)

    @property
    def star_words(self) -> tuple[int, int]:
        """The star squares as a two-word bitboard."""
        return cells_to_words(self.star_squares)

    def describe_stars(self) -> str:
        """The stars in words, e.g. ``starred patches 2, 3, ...; star squares b2, h2``."""
        if not self.starred_patches or not self.star_squares:
            return "no stars"
        return (f"starred patches {', '.join(map(str, self.starred_patches))}; "
                f"star squares {', '.join(cell_name(c) for c in self.star_squares)}")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DraftRules:
        """Build rules from :meth:`to_dict` output; unknown keys are an error."""
        if not isinstance(d, dict):
            raise TypeError(f"draft rules must be a dict, got {type(d).__name__}")
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown draft rules keys: {sorted(map(str, unknown))}")
        return cls(**d)


DRAFT_PRESETS: dict[str, DraftRules] = {
    "default": DraftRules(),
    "no-stars": DraftRules(starred_patches=(), star_squares=()),
}
"""Named rule sets of the draft: the default stars (rule 13.5) and none."""


def get_draft_rules(rules: str | DraftRules | dict[str, Any]) -> DraftRules:
    """Resolve a preset name, a rules dict or a :class:`DraftRules`."""
    if isinstance(rules, DraftRules):
        return rules
    if isinstance(rules, str):
        try:
            return DRAFT_PRESETS[rules]
        except KeyError:
            raise ValueError(f"unknown draft rules preset {rules!r}; choose one of "
                             f"{sorted(DRAFT_PRESETS)}") from None
    if isinstance(rules, dict):
        return DraftRules.from_dict(rules)
    raise TypeError("draft rules must be a preset name, a dict or a DraftRules, got "
                    f"{type(rules).__name__}")
