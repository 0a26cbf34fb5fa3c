"""The filter equality definition itself (runiq.rag._stores.filters); the store contracts pin its use."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from enum import IntEnum
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runiq.rag import RagValidationError
from runiq.rag._stores.filter_tree import And, Compare, Comparison, Exists, Member, Not
from runiq.rag._stores.filter_values import (
    ValueKind,
    date_key,
    datetime_key,
    filter_value,
    metadata_elements,
    metadata_key,
)
from runiq.rag._stores.filters import (
    MAX_FILTER_IN_VALUES,
    MAX_FILTER_INTEGER,
    MIN_FILTER_INTEGER,
    MetadataFilter,
    equality_key,
    parse_filter,
    validate_filters,
)
from runiq.rag.testing.fakes import CANARY
from runiq.rag.testing.filter_cases import HOSTILE_FILTERS
from runiq.rag.testing.filter_strategies import metadata_values, operands

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


# -- the filter language -----------------------------------------------------------------------


def test_plain_filters_stay_plain_mappings_and_validated_ones_pass_through() -> None:
    """``{"team": "hr"}`` is still that mapping; validating a MetadataFilter again returns it unchanged."""
    validated = validate_filters({"team": "hr", "year": 2024})
    assert isinstance(validated, MetadataFilter)
    assert validated == {"team": "hr", "year": 2024}
    assert validate_filters(validated) is validated
    assert parse_filter(validated) is validated.root
    assert parse_filter(None) is None and parse_filter({}) is None


def test_the_canonical_copy_is_plain_detached_and_read_only_all_the_way_down() -> None:
    """Enum members become their values, lists tuples; nested conditions cannot be changed either."""

    class Level(IntEnum):
        HIGH = 3

    operands: list[Any] = ["hr", Level.HIGH]
    source: dict[str, Any] = {"team": {"$in": operands}, "$or": [{"level": Level.HIGH}], "on": date(2024, 5, 1)}
    validated = validate_filters(source)
    operands.append("changed")
    assert validated is not None
    team = validated["team"]
    assert isinstance(team, Mapping) and team["$in"] == ("hr", 3) and type(team["$in"][1]) is int
    either = validated["$or"]
    assert isinstance(either, tuple) and either[0] == {"level": 3}
    assert validated["on"] == date(2024, 5, 1)
    with pytest.raises(TypeError):
        team["$in"] = ()  # type: ignore[index]


def test_the_tree_says_what_each_operator_means() -> None:
    """Entries AND-combine; several operators on a key too; a date equality is its YYYY-MM-DD string."""
    node = parse_filter({"year": {"$gte": 2020, "$lt": 2025}, "on": date(2024, 5, 1), "tags": {"$nin": ["x"]}})
    assert isinstance(node, And) and len(node.clauses) == 3
    years, on, tags = node.clauses
    assert isinstance(years, And) and [c.op for c in years.clauses if isinstance(c, Compare)] == [
        Comparison.GTE,
        Comparison.LT,
    ]
    assert isinstance(on, Compare) and on.value.kind is ValueKind.STRING and on.value.key == "2024-05-01"
    assert isinstance(tags, Member) and tags.negated
    single = parse_filter({"$not": {"draft": {"$exists": True}}})
    assert single == Not(Exists("draft", True))
    ranged = parse_filter({"on": {"$gt": date(2024, 5, 1)}})
    assert isinstance(ranged, Compare) and ranged.value.kind is ValueKind.DATE


@pytest.mark.parametrize("filters", [pytest.param(f, id=i) for i, f in HOSTILE_FILTERS])
def test_hostile_filters_fail_fast_with_fixed_messages(filters: Any) -> None:
    """Too deep, too large, unknown operators, bad keys and values: a fixed message, nothing chained."""
    with pytest.raises(RagValidationError, match=r"^Filter") as caught:
        validate_filters(filters)
    assert CANARY not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__context__ is None


def test_limits_are_checked_before_the_input_is_walked() -> None:
    """A million-element $in or a million keys is refused without looking at the elements."""

    class Untouchable(list[Any]):
        def __iter__(self) -> Any:
            raise AssertionError("the elements were walked")

    with pytest.raises(RagValidationError, match="at most 1000 values"):
        validate_filters({"k": {"$in": Untouchable([0] * (MAX_FILTER_IN_VALUES + 1))}})
    with pytest.raises(RagValidationError, match="at most 128 conditions"):
        validate_filters({f"k{i}": i for i in range(1_000_000)})
    assert validate_filters({"k": {"$in": list(range(MAX_FILTER_IN_VALUES))}}) is not None


@given(st.dates())
def test_a_date_string_is_its_day(day: date) -> None:
    """``YYYY-MM-DD`` keys are day numbers, so they order chronologically."""
    assert date_key(day.isoformat()) == day.toordinal()


@given(st.from_regex(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}\Z"))
def test_date_strings_are_exactly_the_valid_calendar_dates(text: str) -> None:
    """A date-shaped string is a date exactly when it is a real day (2024-02-30 and year 0000 are not)."""
    try:
        expected: int | None = date.fromisoformat(text).toordinal()
    except ValueError:
        expected = None
    assert date_key(text) == expected


_ZONES = st.sampled_from([UTC, timezone(timedelta(hours=2)), timezone(timedelta(hours=-8, minutes=-30))])
_EPOCH = datetime(1, 1, 1, tzinfo=UTC)


@given(st.datetimes(timezones=_ZONES), st.datetimes(timezones=_ZONES))
def test_datetime_strings_order_as_instants(first: datetime, second: datetime) -> None:
    """Whatever the offsets, keys compare like the instants; ``Z`` is ``+00:00``."""
    a, b = datetime_key(first.isoformat()), datetime_key(second.isoformat())
    assert a is not None and b is not None
    assert (a < b) is (first < second) and (a == b) is (first == second)
    assert datetime_key(first.isoformat().replace("+00:00", "Z")) == a


@given(
    st.from_regex(
        r"\A[0-9]{4}-[0-1][0-9]-[0-3][0-9]T[0-2][0-9]:[0-6][0-9]:[0-6][0-9](\.[0-9]{1,6})?(Z|[+-][0-2][0-9]:[0-6][0-9])\Z"
    )
)
def test_datetime_strings_are_exactly_the_valid_instants(text: str) -> None:
    """Valid fields give the instant Python reads; an impossible field (hour 24, second 60, offset
    minute 60, which Python would carry into the hour) makes the string no datetime at all."""
    try:
        parsed: datetime | None = datetime.fromisoformat(text)
    except ValueError:
        parsed = None
    if text[-1] != "Z" and int(text[-2:]) > 59:
        parsed = None
    expected = None if parsed is None else (parsed - _EPOCH) // timedelta(microseconds=1)
    key = datetime_key(text)
    assert (None if key is None else key - 86_400_000_000) == expected


def test_datetime_operands_must_be_aware_and_keep_their_instant() -> None:
    """A naive datetime is ambiguous; an aware one is the same instant whatever its offset."""
    later = filter_value(datetime(2024, 5, 1, 10, tzinfo=timezone(timedelta(hours=2))))
    assert later.kind is ValueKind.DATETIME and later.key == datetime_key("2024-05-01T08:00:00Z")
    assert later.text == "2024-05-01T10:00:00+02:00"
    with pytest.raises(RagValidationError, match="timezone-aware"):
        filter_value(datetime(2024, 5, 1))


@given(metadata_values(), operands())
def test_metadata_of_another_kind_never_matches(value: Any, operand: Any) -> None:
    """A value is compared only in the operand's kind: a string with a number, a boolean with a
    number or a datetime string with a date always gives no key, so neither equality nor a range holds."""
    target = filter_value(operand)
    for element in metadata_elements(value):
        key = metadata_key(element, target.kind)
        if key is None:
            continue
        if target.kind in (ValueKind.DATE, ValueKind.DATETIME):
            assert isinstance(element, str)
        elif target.kind is ValueKind.NUMBER:
            assert isinstance(element, int | float) and not isinstance(element, bool)
        else:
            assert type(element) is type(target.value)


def test_a_validated_filter_reads_like_the_filter_written() -> None:
    """Its repr shows plain dicts and tuples, not the read-only proxies it is made of."""
    validated = validate_filters({"year": {"$gte": 2020}, "$or": [{"team": "hr"}]})
    assert repr(validated) == "MetadataFilter({'year': {'$gte': 2020}, '$or': ({'team': 'hr'},)})"
