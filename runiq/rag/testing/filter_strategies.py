"""Hypothesis strategies for metadata and filters, to test a store against the reference evaluation.

Needs ``hypothesis`` (part of ``runiq[testing]``). Values come from small pools that collide
often (``3`` and ``3.0``, ``True`` and ``1``, ``"é"`` and ``"e\\u0301"``, one instant written with
different offsets), with dates and datetimes both well formed and almost so (``2024-02-30``,
``24:00``, ``+24:00``), so that equal, ordered and incomparable pairs all occur.
"""

from __future__ import annotations

from datetime import UTC, date, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

from runiq.rag._stores.filters import MAX_FILTER_DEPTH

__all__ = [
    "FILTER_KEYS",
    "date_texts",
    "datetime_texts",
    "filters",
    "metadata_rows",
    "metadata_values",
    "operands",
]

FILTER_KEYS = ("a", "b", "c")
_ZONES = (UTC, *(timezone(timedelta(minutes=m)) for m in (0, 120, -480, 840, -(23 * 60 + 59), 330)))
_INTEGERS = st.one_of(
    st.integers(-3, 3),
    st.sampled_from([2**53, 2**53 + 1, 2**60, 10**18, 2**63 - 1, -(2**63)]),
    st.integers(-(2**63), 2**63 - 1),
)
_FLOATS = st.one_of(
    st.sampled_from([0.0, -0.0, 3.0, 2.5, -1.5, 1e18, float(2**60), float(2**53), 1e-300, 1.7976931348623157e308]),
    st.floats(allow_nan=False, allow_infinity=False),
)
_STRINGS = st.one_of(
    st.sampled_from(["", "a", "b", "A", "Z", "\u00e9", "e\u0301", "3", "true", "2024", "\U0001f600", "\ufb01"]),
    st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=4),
)
_DATETIMES = st.datetimes(timezones=st.sampled_from(_ZONES)).map(
    lambda value: value if value.second % 2 else value.replace(microsecond=0)
)


_DATE_FLAWS: dict[str, Any] = {
    "none": lambda text: text,
    "leap-day-of-1900": lambda text: "1900-02-29",
    "leap-day-of-2000": lambda text: "2000-02-29",
    "day-30-of-february": lambda text: text[:4] + "-02-30",
    "day-31-of-april": lambda text: text[:4] + "-04-31",
    "month-13": lambda text: text[:5] + "13" + text[7:],
    "month-00": lambda text: text[:5] + "00" + text[7:],
    "day-32": lambda text: text[:8] + "32",
    "day-00": lambda text: text[:8] + "00",
    "year-0000": lambda text: "0000" + text[4:],
    "short-month": lambda text: text[:5] + text[6:],
}


@st.composite
def date_texts(draw: st.DrawFn) -> str:
    """``YYYY-MM-DD``, valid or with one flaw (29 February 1900, month 13, year 0000, ...)."""
    text = draw(st.dates()).isoformat()
    flaw = draw(st.one_of(st.just("none"), st.sampled_from(sorted(_DATE_FLAWS))))
    return str(_DATE_FLAWS[flaw](text))


def _zone(text: str) -> int:
    """Where the zone starts: the ``Z`` or the sign of ``+HH:MM``."""
    return len(text) - 1 if text.endswith("Z") else len(text) - 6


_DATETIME_FLAWS: dict[str, Any] = {
    "none": lambda text: text,
    "hour-24": lambda text: text[:11] + "24" + text[13:],
    "minute-60": lambda text: text[:14] + "60" + text[16:],
    "second-60": lambda text: text[:17] + "60" + text[19:],
    "offset-hour-24": lambda text: text[: _zone(text)] + "+24:00",
    "offset-minute-60": lambda text: text[: _zone(text)] + "-05:60",
    "offset-23:59": lambda text: text[: _zone(text)] + "+23:59",
    "offset-minus-zero": lambda text: text[: _zone(text)] + "-00:00",
    "seven-fraction-digits": lambda text: text[:19] + ".1234567" + text[_zone(text) :],
    "one-fraction-digit": lambda text: text[:19] + ".5" + text[_zone(text) :],
    "no-zone": lambda text: text[: _zone(text)],
    "space": lambda text: text[:10] + " " + text[11:],
    "lower-t": lambda text: text[:10] + "t" + text[11:],
    "lower-z": lambda text: text[: _zone(text)] + "z",
    "leap-day-of-1900": lambda text: "1900-02-29" + text[10:],
    "day-31-of-april": lambda text: text[:4] + "-04-31" + text[10:],
    "year-0000": lambda text: "0000" + text[4:],
}


@st.composite
def datetime_texts(draw: st.DrawFn) -> str:
    """ISO 8601 with an offset (or ``Z``), valid or with one flaw (hour 24, second 60, offset minute 60, ...)."""
    value = draw(_DATETIMES)
    text = value.isoformat()
    if text.endswith("+00:00") and draw(st.booleans()):
        text = text[:-6] + "Z"
    flaw = draw(st.one_of(st.just("none"), st.sampled_from(sorted(_DATETIME_FLAWS))))
    return str(_DATETIME_FLAWS[flaw](text))


def metadata_values() -> st.SearchStrategy[Any]:
    """A scalar metadata value (booleans, numbers, strings, date and datetime strings) or a short list of them."""
    scalar = st.one_of(st.booleans(), _INTEGERS, _FLOATS, _STRINGS, date_texts(), datetime_texts())
    return st.one_of(scalar, st.lists(scalar, max_size=3).map(tuple))


def metadata_rows() -> st.SearchStrategy[dict[str, Any]]:
    """Metadata over :data:`FILTER_KEYS` (any subset, often all)."""
    return st.dictionaries(st.sampled_from(FILTER_KEYS), metadata_values(), max_size=len(FILTER_KEYS))


def operands() -> st.SearchStrategy[Any]:
    """A filter operand: anything a metadata scalar can be, or a date, or an aware datetime."""
    days = st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31))
    return st.one_of(st.booleans(), _INTEGERS, _FLOATS, _STRINGS, date_texts(), datetime_texts(), days, _DATETIMES)


@st.composite
def _condition(draw: st.DrawFn) -> dict[str, Any]:
    key = draw(st.sampled_from(FILTER_KEYS))
    op = draw(st.sampled_from(["plain", "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists"]))
    if op == "$exists":
        return {key: {op: draw(st.booleans())}}
    if op in ("$in", "$nin"):
        return {key: {op: draw(st.lists(operands(), max_size=4))}}
    operand = draw(operands())
    if op in ("$gt", "$gte", "$lt", "$lte") and isinstance(operand, bool):
        operand = int(operand)  # booleans have no order: such a range is rejected
    return {key: operand} if op == "plain" else {key: {op: operand}}


def filters(max_leaves: int = 6) -> st.SearchStrategy[dict[str, Any]]:
    """A valid filter: conditions combined by ``$and``, ``$or``, ``$not`` and multi-key mappings."""
    return _combined(max_leaves).filter(lambda spec: _depth(spec) <= MAX_FILTER_DEPTH)


def _depth(spec: dict[str, Any]) -> int:
    nested = [0]
    for key, value in spec.items():
        if key in ("$and", "$or"):
            nested.extend(_depth(part) for part in value)
        elif key == "$not":
            nested.append(_depth(value))
    return 1 + max(nested)


def _combined(max_leaves: int) -> st.SearchStrategy[dict[str, Any]]:
    return st.recursive(
        _condition(),
        lambda inner: st.one_of(
            st.lists(inner, min_size=1, max_size=3).map(lambda parts: {"$and": parts}),
            st.lists(inner, min_size=1, max_size=3).map(lambda parts: {"$or": parts}),
            inner.map(lambda part: {"$not": part}),
            st.tuples(inner, inner).map(lambda pair: {**pair[0], **pair[1]}),
        ),
        max_leaves=max_leaves,
    )
