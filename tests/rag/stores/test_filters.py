"""The filter equality definition itself (runiq.rag.stores.filters); the store contracts pin its use."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runiq.rag import RagValidationError
from runiq.rag.stores.filters import MAX_FILTER_INTEGER, MIN_FILTER_INTEGER, equality_key, validate_filters

_INTS = st.integers(MIN_FILTER_INTEGER, MAX_FILTER_INTEGER)
_FLOATS = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def _number_pairs(draw: st.DrawFn) -> tuple[int | float, int | float]:
    """Two numbers, often equal in value across types (3 and 3.0, 2**60 and float(2**60))."""
    a = draw(st.one_of(_INTS, _FLOATS))
    related: list[int | float] = [a, float(a)]
    if isinstance(a, float) and a.is_integer():
        related.append(int(a))
    b = draw(st.one_of(st.sampled_from(related), _INTS, _FLOATS))
    return a, b


@given(_number_pairs())
def test_numbers_are_equal_exactly_when_their_json_decimals_are(pair: tuple[int | float, int | float]) -> None:
    """The definition in one line: a number is the decimal JSON (and PostgreSQL jsonb) holds for it.

    Keys also order like those decimals, which a later range operator can rely on."""
    a, b = pair
    (kind_a, key_a), (kind_b, key_b) = equality_key(a), equality_key(b)
    decimal_a, decimal_b = Decimal(json.dumps(a)), Decimal(json.dumps(b))
    assert kind_a == kind_b == "number"
    assert (key_a == key_b) is (decimal_a == decimal_b)
    assert (key_a < key_b) is (decimal_a < decimal_b)  # type: ignore[operator]


@given(st.booleans(), st.one_of(_INTS, _FLOATS, st.text()))
def test_booleans_equal_only_booleans(flag: bool, other: int | float | str) -> None:
    """No number or string shares a key with True or False."""
    assert equality_key(flag) != equality_key(other)
    assert equality_key(flag) == equality_key(bool(flag))


@given(st.text(), st.one_of(_INTS, _FLOATS))
def test_strings_never_equal_numbers(text: str, number: int | float) -> None:
    """ "3" and 3 differ; a string equals only the identical string."""
    assert equality_key(text) != equality_key(number)
    assert equality_key(text) == equality_key(str(text))


def test_the_pinned_cases() -> None:
    """3 == 3.0, True != 1, "3" != 3, 2**53 + 1 != 2**53, no Unicode normalisation."""
    assert equality_key(3) == equality_key(3.0) == equality_key(3.00000)
    assert equality_key(True) != equality_key(1)
    assert equality_key("3") != equality_key(3)
    assert equality_key(2**53 + 1) != equality_key(2**53) == equality_key(float(2**53))
    assert equality_key(10**18) == equality_key(1e18)
    assert equality_key(2**60) != equality_key(float(2**60))  # float(2**60) is written 1.152921504606847e+18
    assert equality_key("caf\u00e9") != equality_key("cafe\u0301")


def test_validate_filters_returns_a_read_only_plain_copy_or_none() -> None:
    """Empty means no filter; the copy is read-only and detached from the caller's mapping."""
    assert validate_filters(None) is None
    assert validate_filters({}) is None
    source: dict[str, Any] = {"team": "hr", "year": 2024}
    filters = validate_filters(source)
    source["team"] = "changed"
    assert dict(filters or {}) == {"team": "hr", "year": 2024}
    with pytest.raises(TypeError):
        filters["team"] = "x"  # type: ignore[index]
    with pytest.raises(RagValidationError):
        validate_filters([("team", "hr")])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "filters",
    [
        {"k": "CANARY-filter\x00"},
        {"CANARY-filter\x00": "x"},
        {"k": float("nan")},
        {"k": 2**63},
        {"k": ["CANARY-filter"]},
    ],
)
def test_rejections_are_fixed_messages_without_the_input(filters: dict[str, Any]) -> None:
    """Filter values and keys are untrusted: the error names the rule, never the value."""
    with pytest.raises(RagValidationError) as caught:
        validate_filters(filters)
    assert "CANARY" not in str(caught.value)
    assert "9223372036854775808" not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__context__ is None
