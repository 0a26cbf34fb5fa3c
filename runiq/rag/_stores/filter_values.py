"""Filter values: which metadata values equal a filter operand, how values order, and the date forms.

The rules themselves are documented in :mod:`runiq.rag._stores.filters`; this module is their code.
Every operand has a :class:`ValueKind` and a canonical ``key``. A metadata value is compared with an
operand only through :func:`metadata_key`, which gives the metadata value's key *in the operand's
kind* or ``None`` when the value is not of that kind (a string is never a number, a boolean never a
number, a date only a string of the exact ``YYYY-MM-DD`` form). Equal keys are equal values; keys of
one kind order like the values (numbers by their decimal value, strings by code point, dates and
datetimes chronologically).
"""

from __future__ import annotations

import calendar
import math
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import TypeAlias

from runiq.errors import RagValidationError
from runiq.rag._documents import MetadataScalar

__all__ = [
    "DATETIME_PATTERN",
    "DATE_PATTERN",
    "MAX_FILTER_INTEGER",
    "MIN_FILTER_INTEGER",
    "EqualityKey",
    "FilterOperand",
    "FilterValue",
    "OrderKey",
    "UNSTORABLE",
    "ValueKind",
    "date_key",
    "datetime_key",
    "equality_key",
    "filter_value",
    "metadata_elements",
    "metadata_key",
]

MIN_FILTER_INTEGER = -(2**63)
MAX_FILTER_INTEGER = 2**63 - 1
# Below this magnitude an integral float's repr is its exact value ("123.0"): no Decimal needed.
_EXACT_FLOAT_INTEGERS = 2**53

# The metadata strings a date or datetime operand compares with (the same text is the SQL regex).
DATE_PATTERN = "[0-9]{4}-[0-9]{2}-[0-9]{2}"
DATETIME_PATTERN = DATE_PATTERN + "T[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]{1,6})?(Z|[+-][0-9]{2}:[0-9]{2})"
_DATE = re.compile(DATE_PATTERN)
# Characters no PostgreSQL text holds (NUL) or UTF-8 encodes (lone surrogates): never in a filter.
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_DATETIME = re.compile(DATETIME_PATTERN)

# (kind, canonical value): "boolean" -> bool, "number" -> int (every integral value) or a
# non-integral float, "string" -> str. "non-finite" -> repr, for metadata only: no filter holds one.
EqualityKey: TypeAlias = tuple[str, bool | int | float | str]
OrderKey: TypeAlias = bool | int | float | str
FilterOperand: TypeAlias = bool | int | float | str | date | datetime


class ValueKind(StrEnum):
    """What an operand compares with. DATE and DATETIME operands compare with metadata *strings*."""

    BOOLEAN = "boolean"
    NUMBER = "number"
    STRING = "string"
    DATE = "date"
    DATETIME = "datetime"


@dataclass(frozen=True, slots=True)
class FilterValue:
    """A validated operand: its kind, its canonical key and its plain value.

    ``key``: bool; int or non-integral float (numbers); str; the proleptic Gregorian day number
    (dates); microseconds since 0001-01-01T00:00Z (datetimes). ``value`` is the plain Python value
    (an enum member's value); ``text`` is how a store writes it: JSON for booleans and numbers, the
    string itself, ``YYYY-MM-DD`` for a date, ISO 8601 with its UTC offset for a datetime.
    """

    kind: ValueKind
    key: OrderKey
    value: FilterOperand
    text: str


def equality_key(value: MetadataScalar) -> EqualityKey:
    """The canonical form of a metadata or filter value: equal values, and only those, share a key."""
    if isinstance(value, bool):
        return ("boolean", bool(value))
    if isinstance(value, int):
        return ("number", int(value))
    if isinstance(value, float):
        return _float_key(float(value))
    return ("string", str(value))


def _float_key(value: float) -> EqualityKey:
    if not math.isfinite(value):
        return ("non-finite", repr(value))
    if not value.is_integer():
        # Its shortest decimal is not an integer either, and distinct floats have distinct decimals:
        # the float itself is canonical (and orders like its decimal).
        return ("number", value)
    if abs(value) < _EXACT_FLOAT_INTEGERS:
        return ("number", int(value))
    return ("number", int(Decimal(repr(value))))  # 1.152921504606847e+18, not float(2**60)'s binary value


def metadata_elements(value: object) -> tuple[object, ...]:
    """The values a metadata value offers a condition: a list's (or tuple's) elements, else itself."""
    return tuple(value) if isinstance(value, list | tuple) else (value,)


def metadata_key(value: object, kind: ValueKind) -> OrderKey | None:
    """``value``'s key in ``kind``, or ``None`` when it is not of that kind (it then never matches)."""
    if not isinstance(value, str | int | float | bool):
        return None
    if kind is ValueKind.DATE:
        return date_key(value) if isinstance(value, str) else None
    if kind is ValueKind.DATETIME:
        return datetime_key(value) if isinstance(value, str) else None
    value_kind, key = equality_key(value)
    return key if value_kind == kind.value else None


def date_key(text: str) -> int | None:
    """The day number of a ``YYYY-MM-DD`` calendar date (year 1 to 9999), else ``None``."""
    if _DATE.fullmatch(text) is None:
        return None
    year, month, day = int(text[0:4]), int(text[5:7]), int(text[8:10])
    return _day_number(year, month, day)


def _day_number(year: int, month: int, day: int) -> int | None:
    if year < 1 or not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year, month)[1]:
        return None
    return date(year, month, day).toordinal()


def datetime_key(text: str) -> int | None:
    """Microseconds since 0001-01-01T00:00Z of ``YYYY-MM-DDTHH:MM:SS[.ffffff](Z|+HH:MM|-HH:MM)``, else ``None``.

    Hours 00-23, minutes and seconds 00-59 (no leap second), one to six fraction digits, an offset
    below 24 hours."""
    match = _DATETIME.fullmatch(text)
    if match is None:
        return None
    day = _day_number(int(text[0:4]), int(text[5:7]), int(text[8:10]))
    hour, minute, second = int(text[11:13]), int(text[14:16]), int(text[17:19])
    if day is None or hour > 23 or minute > 59 or second > 59:
        return None
    offset = _offset_seconds(match.group(2))
    if offset is None:
        return None
    micros = int((match.group(1) or ".")[1:].ljust(6, "0"))
    return (day * 86_400 + hour * 3_600 + minute * 60 + second - offset) * 1_000_000 + micros


def _offset_seconds(zone: str) -> int | None:
    if zone == "Z":
        return 0
    hours, minutes = int(zone[1:3]), int(zone[4:6])
    if hours > 23 or minutes > 59:
        return None
    return (-1 if zone[0] == "-" else 1) * (hours * 3_600 + minutes * 60)


def filter_value(value: object) -> FilterValue:
    """Validate one operand: a string, a finite number, a 64-bit integer, a boolean, a date or an aware datetime."""
    if isinstance(value, bool):
        return FilterValue(ValueKind.BOOLEAN, bool(value), bool(value), "true" if value else "false")
    if isinstance(value, int):
        if not MIN_FILTER_INTEGER <= value <= MAX_FILTER_INTEGER:
            raise RagValidationError("Filter integers must fit in 64 bits (-2**63 to 2**63 - 1).")
        return FilterValue(ValueKind.NUMBER, int(value), int(value), str(int(value)))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise RagValidationError("Filter numbers must be finite (no NaN or infinity).")
        return FilterValue(ValueKind.NUMBER, equality_key(value)[1], float(value), repr(float(value)))
    if isinstance(value, str):
        if UNSTORABLE.search(value):
            raise RagValidationError("Filter strings must not contain NUL (U+0000) or lone surrogates.")
        return FilterValue(ValueKind.STRING, str(value), str(value), str(value))
    if isinstance(value, datetime):
        return _datetime_value(value)
    if isinstance(value, date):
        plain = date(value.year, value.month, value.day)
        return FilterValue(ValueKind.DATE, plain.toordinal(), plain, plain.isoformat())
    raise RagValidationError("Filter values must be strings, numbers, booleans, dates or timezone-aware datetimes.")


def _datetime_value(value: datetime) -> FilterValue:
    offset = value.utcoffset()
    if offset is None:
        raise RagValidationError("Filter datetimes must be timezone-aware.")
    if offset % timedelta(minutes=1):
        raise RagValidationError("Filter datetimes must have a UTC offset of whole minutes.")
    plain = datetime(
        value.year, value.month, value.day, value.hour, value.minute, value.second, value.microsecond, value.tzinfo
    )
    text = plain.isoformat()
    key = datetime_key(text)
    assert key is not None  # isoformat of an aware datetime with a whole-minute offset is in the grammar
    return FilterValue(ValueKind.DATETIME, key, plain, text)
