"""The reference evaluation of a filter against one chunk's metadata.

This is the semantics every store must reproduce (the contract kit and the PostgreSQL compiler's
tests compare with it). The in-memory store answers equality from its index and asks this module
for everything else.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping

from runiq.rag._stores.filter_tree import And, Compare, Comparison, Exists, FilterNode, Member, Not, Or
from runiq.rag._stores.filter_values import FilterValue, OrderKey, metadata_elements, metadata_key

__all__ = ["matches"]

_ORDER: dict[Comparison, Callable[[OrderKey, OrderKey], bool]] = {
    Comparison.GT: operator.gt,
    Comparison.GTE: operator.ge,
    Comparison.LT: operator.lt,
    Comparison.LTE: operator.le,
}


def matches(node: FilterNode, metadata: Mapping[str, object]) -> bool:
    """Whether a chunk with ``metadata`` matches the filter ``node``."""
    match node:
        case And(clauses):
            return all(matches(clause, metadata) for clause in clauses)
        case Or(clauses):
            return any(matches(clause, metadata) for clause in clauses)
        case Not(clause):
            return not matches(clause, metadata)
        case Exists(key, present):
            return (key in metadata) is present
        case Compare() | Member():
            return node.key in metadata and _leaf(node, metadata_elements(metadata[node.key]))


def _leaf(node: Compare | Member, elements: tuple[object, ...]) -> bool:
    if isinstance(node, Member):
        found = any(_equals(element, value) for value in node.values for element in elements)
        return found is not node.negated
    if node.op is Comparison.EQ:
        return any(_equals(element, node.value) for element in elements)
    if node.op is Comparison.NE:
        return not any(_equals(element, node.value) for element in elements)
    holds = _ORDER[node.op]
    for element in elements:
        key = metadata_key(element, node.value.kind)
        if key is not None and holds(key, node.value.key):
            return True
    return False


def _equals(element: object, value: FilterValue) -> bool:
    key = metadata_key(element, value.kind)
    return key is not None and key == value.key
