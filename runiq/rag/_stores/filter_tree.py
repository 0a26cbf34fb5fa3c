"""The validated form of a metadata filter: a small tree a store evaluates or compiles.

:func:`runiq.rag._stores.filters.parse_filter` builds it; a store walks it with ``match`` on these
classes. Leaves name one metadata key; ``And``/``Or``/``Not`` combine whole filters.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TypeAlias

from runiq.rag._stores.filter_values import FilterValue

__all__ = ["And", "Compare", "Comparison", "Exists", "FilterNode", "Member", "Not", "Or"]


class Comparison(StrEnum):
    """The operator of a :class:`Compare` leaf (its value is the operator's name in a filter)."""

    EQ = "$eq"
    NE = "$ne"
    GT = "$gt"
    GTE = "$gte"
    LT = "$lt"
    LTE = "$lte"


@dataclass(frozen=True, slots=True)
class Compare:
    """``key`` compared with one value. EQ and the ranges match when any element does; NE when the key
    is present and no element equals ``value``."""

    key: str
    op: Comparison
    value: FilterValue


@dataclass(frozen=True, slots=True)
class Member:
    """``$in`` (``negated=False``: some element equals some value) or ``$nin`` (the key is present and
    no element equals any value)."""

    key: str
    values: tuple[FilterValue, ...]
    negated: bool


@dataclass(frozen=True, slots=True)
class Exists:
    """``$exists``: the key is present (``present=True``) or absent."""

    key: str
    present: bool


@dataclass(frozen=True, slots=True)
class And:
    clauses: tuple[FilterNode, ...]


@dataclass(frozen=True, slots=True)
class Or:
    clauses: tuple[FilterNode, ...]


@dataclass(frozen=True, slots=True)
class Not:
    """The complement: every chunk the clause does not match, including those without its keys."""

    clause: FilterNode


FilterNode: TypeAlias = Compare | Member | Exists | And | Or | Not
