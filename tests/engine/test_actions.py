"""The action encoding and its readable notation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchwork_env.data.actions import (
    ADVANCE,
    LEATHER_BASE,
    N_ACTIONS,
    Advance,
    Buy,
    Leather,
    cell_name,
    decode_action,
    encode_buy,
    encode_leather,
    format_action,
    parse_action,
    parse_cell,
)


def test_the_contract_ranges() -> None:
    assert N_ACTIONS == 2026
    assert ADVANCE == 1944
    assert LEATHER_BASE == 1945
    assert encode_buy(2, 7, 80) == 1943
    assert encode_buy(1, 3, 30) == 648 + 3 * 81 + 30
    assert encode_leather(80) == 2025


def test_decoding() -> None:
    assert decode_action(0) == Buy(0, 0, 0)
    assert decode_action(648 + 81 * 3 + 30) == Buy(1, 3, 30)
    assert decode_action(ADVANCE) == Advance()
    assert decode_action(2025) == Leather(80)


def test_cells_are_named_by_column_letter_and_row_number() -> None:
    assert cell_name(0) == "a1"
    assert cell_name(8) == "i1"
    assert cell_name(9 * 3 + 2) == "c4"
    assert cell_name(80) == "i9"
    assert parse_cell("C4") == 29


def test_the_notation_reads_as_in_the_documentation() -> None:
    assert format_action(encode_buy(1, 3, parse_cell("c4"))) == "buy slot 1 o3 at c4"
    assert format_action(ADVANCE) == "advance"
    assert format_action(encode_leather(parse_cell("e5"))) == "leather at e5"


@given(st.integers(0, N_ACTIONS - 1))
def test_every_action_round_trips_through_its_notation(action: int) -> None:
    assert parse_action(format_action(action)) == action
    assert parse_action(str(action)) == action


def test_the_notation_tolerates_case_and_spacing() -> None:
    assert parse_action("  Buy  Slot 2 o7 at I9 ") == 1943
    assert parse_action("ADVANCE") == ADVANCE


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("jump", "cannot read move"),
        ("buy slot 3 o0 at a1", "slot must be in 0..2"),
        ("buy slot 0 o8 at a1", "orientation must be in 0..7"),
        ("leather at j1", "not a cell name"),
        ("leather at a0", "not a cell name"),
        ("2026", "out of range"),
    ],
)
def test_bad_notation_is_refused_with_the_reason(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse_action(text)


def test_decoding_refuses_out_of_range_and_non_ints() -> None:
    with pytest.raises(ValueError, match="out of range"):
        decode_action(-3)
    with pytest.raises(TypeError):
        decode_action(1.5)  # type: ignore[arg-type]
