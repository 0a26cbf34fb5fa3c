"""The in-memory store's metadata index and how it answers a filter tree.

Postings map ``(key, equality_key(element))`` to rows (every element of a list-valued value is
posted), and each key to the rows that have it. ``$eq``/``$in`` on booleans, numbers, strings and
dates are answered from the postings, ``$ne``/``$nin``/``$exists``/``$not`` by set difference. Ranges
and datetime equality bisect a sorted ``(key, kind)`` order of every element's
:func:`~runiq.rag._stores.filter_values.metadata_key`, built on the first such query and dropped when
a write touches the key. Once an ``$and`` is down to a few thousand rows, its other clauses are tested
row by row with the reference evaluation (:func:`runiq.rag._stores.filters.matches`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from runiq.rag._stores.filter_match import matches
from runiq.rag._stores.filter_tree import And, Compare, Comparison, Exists, FilterNode, Member, Not, Or
from runiq.rag._stores.filter_values import (
    EqualityKey,
    FilterValue,
    OrderKey,
    ValueKind,
    equality_key,
    metadata_elements,
    metadata_key,
)

__all__ = ["MetadataIndex"]

_POSTED_KINDS = frozenset({ValueKind.BOOLEAN, ValueKind.NUMBER, ValueKind.STRING})
_SCALARS = (str, int, float, bool)
# Once an $and has narrowed to this many rows, its other clauses are tested row by row.
_ROW_BY_ROW = 4096

MetadataOf = Callable[[int], Mapping[str, object]]
# (sorted keys, the slot of each key): every element of every row that has the metadata key, in one kind.
_Order = tuple[list[OrderKey], list[int]]
_K = TypeVar("_K")
_NONE: frozenset[int] = frozenset()


class MetadataIndex:
    """Rows by metadata value and by key, for one in-memory index."""

    def __init__(self) -> None:
        self._postings: dict[tuple[str, EqualityKey], set[int]] = {}
        self._keys: dict[str, set[int]] = {}
        self._orders: dict[str, dict[ValueKind, _Order]] = {}

    def add(self, slot: int, metadata: Mapping[str, object]) -> None:
        for key, value in metadata.items():
            self._orders.pop(key, None)
            self._keys.setdefault(key, set()).add(slot)
            for posting in _postings(key, value):
                self._postings.setdefault(posting, set()).add(slot)

    def remove(self, slot: int, metadata: Mapping[str, object]) -> None:
        for key, value in metadata.items():
            self._orders.pop(key, None)
            _discard(self._keys, key, slot)
            for posting in _postings(key, value):
                _discard(self._postings, posting, slot)

    def rows(self, node: FilterNode, live: Iterable[int], metadata_of: MetadataOf) -> set[int]:
        """The rows matching ``node``; ``live`` are all rows (needed by ``$not`` and ``$exists: false``)."""
        return _Evaluation(self, live, metadata_of).rows(node)

    def having(self, key: str) -> frozenset[int] | set[int]:
        """The rows that have ``key`` (the index's own set: do not change it)."""
        return self._keys.get(key, _NONE)

    def equal(self, key: str, value: FilterValue, metadata_of: MetadataOf) -> frozenset[int] | set[int]:
        """The rows with an element equal to ``value`` (do not change the set)."""
        if value.kind in _POSTED_KINDS:
            return self._postings.get((key, (value.kind.value, value.key)), _NONE)
        return self.ordered(key, Comparison.EQ, value, metadata_of)

    def ordered(self, key: str, op: Comparison, value: FilterValue, metadata_of: MetadataOf) -> set[int]:
        """The rows with an element ``op`` ``value`` in ``value``'s kind (EQ or a range)."""
        keys, slots = self._order(key, value.kind, metadata_of)
        left = bisect.bisect_left(keys, value.key)  # the first element not below the value
        right = bisect.bisect_right(keys, value.key)  # the first element above it
        start, stop = {
            Comparison.EQ: (left, right),
            Comparison.GT: (right, len(keys)),
            Comparison.GTE: (left, len(keys)),
            Comparison.LT: (0, left),
            Comparison.LTE: (0, right),
        }[op]
        return set(slots[start:stop])

    def _order(self, key: str, kind: ValueKind, metadata_of: MetadataOf) -> _Order:
        if key not in self._keys:
            return [], []  # cached only for stored keys: a filter's keys cannot grow the index
        orders = self._orders.setdefault(key, {})
        order = orders.get(kind)
        if order is None:
            pairs = sorted(
                (element_key, slot)
                for slot in self._keys[key]
                for element in metadata_elements(metadata_of(slot)[key])
                if (element_key := metadata_key(element, kind)) is not None
            )
            order = orders[kind] = ([pair[0] for pair in pairs], [pair[1] for pair in pairs])
        return order


def _postings(key: str, value: object) -> list[tuple[str, EqualityKey]]:
    return [(key, equality_key(element)) for element in metadata_elements(value) if isinstance(element, _SCALARS)]


def _discard(table: dict[_K, set[int]], key: _K, slot: int) -> None:
    members = table.get(key)
    if members is not None:
        members.discard(slot)
        if not members:
            del table[key]


class _Evaluation:
    def __init__(self, index: MetadataIndex, live: Iterable[int], metadata_of: MetadataOf) -> None:
        self._index = index
        self._live_rows = live
        self._live: set[int] | None = None
        self._metadata_of = metadata_of

    def rows(self, node: FilterNode) -> set[int]:
        match node:
            case And(clauses):
                return self._all(clauses)
            case Or(clauses):
                return set().union(*(self.rows(clause) for clause in clauses))
            case Not(clause):
                return self._everything() - self.rows(clause)
            case Exists(key, present):
                having = self._index.having(key)
                return set(having) if present else self._everything() - having
            case Compare() | Member():
                return self._leaf(node)

    def _all(self, clauses: tuple[FilterNode, ...]) -> set[int]:
        ordered = sorted(clauses, key=_cost)
        result = self.rows(ordered[0])
        for clause in ordered[1:]:
            if not result:
                break
            if len(result) <= _ROW_BY_ROW:
                result = {slot for slot in result if matches(clause, self._metadata_of(slot))}
            else:
                result &= self.rows(clause)
        return result

    def _leaf(self, node: Compare | Member) -> set[int]:
        index = self._index
        if isinstance(node, Member):
            values, negated = node.values, node.negated
        elif node.op in (Comparison.EQ, Comparison.NE):
            values, negated = (node.value,), node.op is Comparison.NE
        else:
            return index.ordered(node.key, node.op, node.value, self._metadata_of)
        found: set[int] = set().union(*(index.equal(node.key, value, self._metadata_of) for value in values))
        return set(index.having(node.key)).difference(found) if negated else found

    def _everything(self) -> set[int]:
        if self._live is None:
            self._live = set(self._live_rows)
        return self._live


def _cost(node: FilterNode) -> int:
    """Clauses an index answers narrowly go first."""
    if isinstance(node, Member) and not node.negated:
        return 0
    if isinstance(node, Compare) and node.op is Comparison.EQ:
        return 0
    return 2 if isinstance(node, Not | Or) else 1
