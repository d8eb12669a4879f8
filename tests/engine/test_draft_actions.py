"""Rule 13.9 (the draft's Discrete(1947) actions and their notation) and rule 13.5's rule
data (DraftRules, its presets and its checks)."""

from __future__ import annotations

import pytest

from patchwork_env.data.actions import Buy, encode_buy, format_action
from patchwork_env.data.draft_actions import (
    DISCARD_BASE,
    N_DRAFT_ACTIONS,
    Discard,
    decode_draft_action,
    encode_discard,
    format_draft_action,
    parse_draft_action,
)
from patchwork_env.data.draft_rules import (
    DRAFT_PRESETS,
    DraftRules,
    get_draft_rules,
)
from patchwork_env.data.patches import PATCHES
from patchwork_env.data.tables import LIST_MASK

# --- rule 13.9: actions -------------------------------------------------------------------


def test_the_action_space_is_the_buys_then_three_discards() -> None:
    """Rule 13.9: 1944 buys, then discards 1944..1946."""
    assert (DISCARD_BASE, N_DRAFT_ACTIONS) == (1944, 1947)
    assert [encode_discard(s) for s in range(3)] == [1944, 1945, 1946]


def test_buys_share_the_main_games_encoding() -> None:
    """Rule 13.9: a buy is encoded and written as in the main game (rule 11.2)."""
    a = encode_buy(1, 3, 29)
    assert decode_draft_action(a) == Buy(1, 3, 29)
    assert format_draft_action(a) == format_action(a) == "buy slot 1 o3 at c4"


def test_discards_decode_and_format() -> None:
    """Rule 13.9: ``discard slot 2`` is action 1946."""
    assert decode_draft_action(1946) == Discard(2)
    assert format_draft_action(1946) == "discard slot 2"


@pytest.mark.parametrize("action", [0, 700, 1943, 1944, 1946])
def test_the_notation_reads_back(action: int) -> None:
    """Rule 13.9: :func:`parse_draft_action` reads what :func:`format_draft_action` writes."""
    assert parse_draft_action(format_draft_action(action)) == action


@pytest.mark.parametrize("text", ["advance", "leather at e5", "discard slot 3", "1947", "x"])
def test_moves_of_no_draft_action_are_refused(text: str) -> None:
    """Rule 13.9: the main game's advance and leather moves are not draft actions."""
    with pytest.raises(ValueError):
        parse_draft_action(text)


@pytest.mark.parametrize("bad", [-1, 1947])
def test_actions_out_of_range_are_refused(bad: int) -> None:
    """Rule 13.9: ids outside 0..1946 are refused."""
    with pytest.raises(ValueError, match=r"out of range 0\.\.1946"):
        decode_draft_action(bad)


# --- rule 13.5: the rule data -------------------------------------------------------------


def test_the_default_stars_are_the_patches_with_buttons_and_five_squares() -> None:
    """Rule 13.5: starred patches have income >= 1; star squares b2, h2, e5, b8, h8."""
    rules = get_draft_rules("default")
    assert rules.starred_patches == tuple(p.id for p in PATCHES if p.income >= 1)
    assert rules.star_squares == (10, 16, 40, 64, 70)
    assert rules.start_buttons == 5


def test_no_placement_covers_two_default_star_squares() -> None:
    """Rule 13.5: the default star squares lie too far apart for one patch."""
    lo, hi = get_draft_rules("default").star_words
    covered = [bin(int(a) & lo).count("1") + bin(int(b) & hi).count("1") for a, b in LIST_MASK]
    assert max(covered) == 1


def test_the_no_stars_preset_has_none() -> None:
    """Rule 13.5: ``no-stars`` names no starred patch and no star square."""
    rules = DRAFT_PRESETS["no-stars"]
    assert rules.starred_patches == () and rules.star_squares == ()


def test_rules_round_trip_through_a_dict() -> None:
    """Rule 13.5: rule data travels as a plain dict."""
    rules = DraftRules(start_buttons=7, starred_patches=(3, 1), star_squares=(0,))
    assert DraftRules.from_dict(rules.to_dict()) == rules
    assert get_draft_rules(rules.to_dict()) == rules


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"start_buttons": -1}, "start_buttons"),
    ({"start_buttons": 2.5}, "start_buttons"),
    ({"starred_patches": (33,)}, "starred_patches"),
    ({"starred_patches": (1, 1)}, "starred_patches"),
    ({"starred_patches": ("a",)}, "starred_patches"),
    ({"star_squares": (81,)}, "star_squares"),
    ({"star_squares": (4, 4)}, "star_squares"),
    ({"star_squares": 5}, "star_squares"),
])
def test_a_field_out_of_its_limits_is_refused_by_name(kwargs: dict, field: str) -> None:
    """Rule 13.5: each field is checked on its own and named in the error."""
    with pytest.raises((TypeError, ValueError), match=f"DraftRules.{field}"):
        DraftRules(**kwargs)


def test_unknown_preset_and_keys_are_refused() -> None:
    """Rule 13.5: an unknown preset or key is named in the error."""
    with pytest.raises(ValueError, match="'stars'"):
        get_draft_rules("stars")
    with pytest.raises(ValueError, match="bonus_size"):
        get_draft_rules({"bonus_size": 7})
