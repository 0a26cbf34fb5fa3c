"""Metadata filters: the one definition every store follows (the contract kit pins it).

A filter is a mapping. ``{"team": "hr", "year": 2024}`` keeps chunks whose metadata holds every key
with an *equal* value (entries are AND-combined; a chunk without the key never matches). A key may
instead map to operators, ``{"year": {"$gte": 2020, "$lt": 2025}}``, and ``$and``, ``$or`` (lists of
filters) and ``$not`` (one filter) combine whole filters. :func:`validate_filters` checks a filter and
returns a :class:`MetadataFilter`, whose :attr:`~MetadataFilter.root` tree
(:mod:`runiq.rag._stores.filter_tree`) a store evaluates; :func:`matches` is the reference evaluation.

**Operators on a key**: ``$eq`` (the plain form), ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``, ``$in``
and ``$nin`` (a list of values), ``$exists`` (``True`` or ``False``). Several operators on one key are
AND-combined. ``$eq``, ``$in`` and the ranges need the key; ``$ne`` and ``$nin`` match a chunk that
has the key and no equal value (a chunk without the key does not match them: use ``$not`` for "not
equal or missing"); ``$not`` matches every chunk its filter does not.

**List-valued metadata** (``{"tags": ("hr", "remote")}``): ``$eq``, ``$in`` and each range match when
*any* element does (so ``{"$gt": 1, "$lt": 5}`` on ``[0, 9]`` matches: 9 > 1 and 0 < 5); ``$ne`` and
``$nin`` match when *no* element is equal; an empty list has the key and equals nothing.

**Equality** (:func:`equality_key`): two values are equal exactly when their keys are.

- **Booleans** equal only booleans: ``True`` is not ``1`` and ``False`` is not ``0``.
- **Numbers** (``int`` and ``float``) compare by value, not type: ``3 == 3.0`` and ``-0.0 == 0``.
  An integer is its exact value, so ``2**53 + 1`` is not ``2**53`` although both round to the same
  float. A float is the decimal JSON writes for it (Python's shortest round-trip ``repr``): ``1e18``
  equals ``10**18``, but ``float(2**60)``, written ``1.152921504606847e+18``, does not equal ``2**60``.
  This is PostgreSQL's ``jsonb`` numeric equality, which is why its containment test serves it.
- **Strings** equal strings code point for code point: no Unicode normalisation (``"é"`` as U+00E9
  is not ``"e"`` followed by U+0301), no case folding, no trimming. A string never equals a number or
  a boolean (``"3"`` is not ``3``, ``"true"`` is not ``True``).
- **Dates** (a ``datetime.date`` operand) equal the one metadata string that writes them,
  ``YYYY-MM-DD``. **Datetimes** (a timezone-aware ``datetime``) equal metadata strings
  ``YYYY-MM-DDTHH:MM:SS[.ffffff]`` followed by ``Z`` or ``+HH:MM``/``-HH:MM`` that denote the same
  instant (``10:00+02:00`` is ``08:00Z``).

**Ordering** (the ranges): numbers with numbers by value, strings with strings by code point
(``"Z" < "a" < "é"``, never a locale's collation), dates with ``YYYY-MM-DD`` metadata strings and
datetimes with datetime metadata strings chronologically. A date is a *typed* operand: ``"2024-05-01"``
is only a string and orders as one; metadata never holds a date, only the string. Anything else never
matches a range: a string against a number, a datetime string against a date, a malformed or
impossible date (``2024-02-30``). Booleans have no order: a range on a boolean is rejected.

:func:`validate_filters` refuses, with :class:`~runiq.errors.RagValidationError` and a fixed message
that never quotes the filter, what no store can evaluate the same way: non-finite floats, integers
outside the signed 64-bit range, ``None``, mappings and lists as values, naive datetimes, keys that
are not non-blank strings or start with ``$``, NUL (U+0000) or lone surrogates in keys or strings,
unknown operators, and filters beyond the limits: nesting deeper than :data:`MAX_FILTER_DEPTH`, more than
:data:`MAX_FILTER_IN_VALUES` values in one ``$in``/``$nin``, more than :data:`MAX_FILTER_CONDITIONS`
conditions or :data:`MAX_FILTER_VALUES` values in all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias

from runiq.errors import RagValidationError
from runiq.rag._stores.filter_match import matches
from runiq.rag._stores.filter_parse import (
    MAX_FILTER_CONDITIONS,
    MAX_FILTER_DEPTH,
    MAX_FILTER_IN_VALUES,
    MAX_FILTER_VALUES,
    MetadataFilter,
    parse_mapping,
)
from runiq.rag._stores.filter_tree import FilterNode
from runiq.rag._stores.filter_values import MAX_FILTER_INTEGER, MIN_FILTER_INTEGER, EqualityKey, equality_key

__all__ = [
    "MAX_FILTER_CONDITIONS",
    "MAX_FILTER_DEPTH",
    "MAX_FILTER_INTEGER",
    "MAX_FILTER_IN_VALUES",
    "MAX_FILTER_VALUES",
    "MIN_FILTER_INTEGER",
    "EqualityKey",
    "FilterSpec",
    "MetadataFilter",
    "equality_key",
    "matches",
    "parse_filter",
    "validate_filters",
]

FilterSpec: TypeAlias = Mapping[str, object]
"""A filter as callers write it (a :class:`MetadataFilter` is one too)."""


def validate_filters(filters: FilterSpec | None) -> MetadataFilter | None:
    """The validated filter; ``None`` for no filter (``None`` or an empty mapping).

    A :class:`MetadataFilter` is returned as it is (it was validated when it was made).
    """
    if filters is None or isinstance(filters, MetadataFilter):
        return filters
    if not isinstance(filters, Mapping):
        raise RagValidationError("Filters must be a mapping of metadata keys to values or conditions.")
    if not filters:
        return None
    return parse_mapping(filters)


def parse_filter(filters: FilterSpec | None) -> FilterNode | None:
    """The tree a store evaluates, or ``None`` when there is no filter (see :func:`validate_filters`)."""
    validated = validate_filters(filters)
    return None if validated is None else validated.root
