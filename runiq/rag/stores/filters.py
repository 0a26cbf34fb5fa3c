"""Metadata filter equality: the one definition every store follows (the contract kit pins it).

A filter maps metadata keys to values. A chunk matches when its metadata holds every key with an
*equal* value (AND-combined; a chunk without the key never matches). Two values are equal exactly
when their :func:`equality_key` is equal:

- **Booleans** equal only booleans: ``True`` is not ``1`` and ``False`` is not ``0``.
- **Numbers** (``int`` and ``float``) compare by value, not type: ``3 == 3.0`` and ``-0.0 == 0``.
  An integer is its exact value, so ``2**53 + 1`` is not ``2**53`` although both round to the same
  float. A float is the decimal JSON writes for it (Python's shortest round-trip ``repr``): ``1e18``
  equals ``10**18``, but ``float(2**60)``, written ``1.152921504606847e+18``, does not equal ``2**60``.
  This is PostgreSQL's ``jsonb`` numeric equality, which is why its containment test serves it.
- **Strings** equal strings code point for code point: no Unicode normalisation (``"é"`` as U+00E9
  is not ``"e"`` followed by U+0301), no case folding, no trimming. A string never equals a number or a boolean
  (``"3"`` is not ``3``, ``"true"`` is not ``True``).

:func:`validate_filters` refuses, with :class:`~runiq.errors.RagValidationError`, what no store can
evaluate the same way: non-finite floats (NaN equals nothing and JSON has no form for it), integers
outside the signed 64-bit range (the widest integer every backend compares exactly), ``None``,
lists, mappings and any other type (metadata cannot hold them, so such a filter could never match;
a later filter language adds explicit operators such as "exists" or "in" instead), keys that are
not non-blank strings, and NUL (U+0000) in keys or strings (PostgreSQL text cannot hold it).

A filter language built on this keeps :func:`equality_key` as its equality and can order keys of
the same kind (numbers by their decimal value, strings by code point) for range operators.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from types import MappingProxyType
from typing import TypeAlias

from runiq.errors import RagValidationError
from runiq.rag.documents import Metadata, MetadataValue

__all__ = ["MAX_FILTER_INTEGER", "MIN_FILTER_INTEGER", "EqualityKey", "equality_key", "validate_filters"]

MIN_FILTER_INTEGER = -(2**63)
MAX_FILTER_INTEGER = 2**63 - 1
# Below this magnitude an integral float's repr is its exact value ("123.0"): no Decimal needed.
_EXACT_FLOAT_INTEGERS = 2**53

# (kind, canonical value): "boolean" -> bool, "number" -> int (every integral value) or a
# non-integral float, "string" -> str. "non-finite" -> repr, for metadata only: validate_filters
# never lets such a filter through.
EqualityKey: TypeAlias = tuple[str, bool | int | float | str]


def equality_key(value: MetadataValue) -> EqualityKey:
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


def validate_filters(filters: Mapping[str, object] | None) -> Metadata | None:
    """A read-only copy of ``filters`` with plain ``str``/``int``/``float``/``bool`` values; ``None`` when empty."""
    if filters is None:
        return None
    if not isinstance(filters, Mapping):
        raise RagValidationError("Filters must be a mapping of metadata keys to values.")
    if not filters:
        return None
    return MappingProxyType({_filter_key(key): _filter_value(value) for key, value in filters.items()})


def _filter_key(key: object) -> str:
    if not isinstance(key, str) or not key.strip() or "\x00" in key:
        raise RagValidationError("Filter keys must be non-blank strings without NUL.")
    return str(key)


def _filter_value(value: object) -> MetadataValue:
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        if not MIN_FILTER_INTEGER <= value <= MAX_FILTER_INTEGER:
            raise RagValidationError("Filter integers must fit in 64 bits (-2**63 to 2**63 - 1).")
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise RagValidationError("Filter numbers must be finite (no NaN or infinity).")
        return float(value)
    if isinstance(value, str):
        if "\x00" in value:
            raise RagValidationError("Filter strings must not contain NUL (U+0000).")
        return str(value)
    raise RagValidationError("Filter values must be strings, numbers or booleans.")
