"""Parsing a filter mapping into a :class:`MetadataFilter`: validation, limits, the canonical copy.

Every rejection is a :class:`~runiq.errors.RagValidationError` with a fixed message that names the
rule, never the offending key or value. Limits are checked before the input is walked further, so a
10k-element ``$in``, a mapping with a million keys or a filter nested a thousand deep fails at once.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType

from runiq.errors import RagValidationError
from runiq.rag._stores.filter_tree import And, Compare, Comparison, Exists, FilterNode, Member, Not, Or
from runiq.rag._stores.filter_values import UNSTORABLE, FilterValue, ValueKind, filter_value

__all__ = [
    "MAX_FILTER_CONDITIONS",
    "MAX_FILTER_DEPTH",
    "MAX_FILTER_IN_VALUES",
    "MAX_FILTER_VALUES",
    "MetadataFilter",
    "parse_mapping",
]

MAX_FILTER_DEPTH = 8  # nesting of filters: the top level is 1, each $and/$or/$not adds one
MAX_FILTER_IN_VALUES = 1_000  # values in one $in or $nin
MAX_FILTER_CONDITIONS = 128  # conditions and $and/$or/$not nodes in one filter
MAX_FILTER_VALUES = 4_096  # operand values in one filter, every $in element counted

_RANGES = {Comparison.GT, Comparison.GTE, Comparison.LT, Comparison.LTE}
_FIELD_OPERATORS = frozenset({*(op.value for op in Comparison), "$in", "$nin", "$exists"})

_NOT_A_MAPPING = "Filters must be a mapping of metadata keys to values or conditions."
_BAD_KEY = "Filter keys must be non-blank strings without NUL or lone surrogates."
_BAD_OPERATOR = (
    "Filter operators are $and, $or and $not in place of a key, "
    "and $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin and $exists on a key."
)


class MetadataFilter(Mapping[str, object]):
    """A validated filter: a read-only canonical copy of the mapping, and its tree in :attr:`root`.

    It is a mapping (the filter as written, values made plain: an ``IntEnum`` member becomes its
    integer, lists become tuples), so it can be passed wherever a filter mapping goes; stores use
    :attr:`root`. Build one with :func:`~runiq.rag._stores.filters.validate_filters`.
    """

    __slots__ = ("_spec", "root")

    def __init__(self, spec: Mapping[str, object], root: FilterNode) -> None:
        self._spec = spec
        self.root = root

    @classmethod
    def all_of(cls, first: MetadataFilter, second: MetadataFilter) -> MetadataFilter:
        """Both filters must match (``{"$and": [first, second]}``); neither is re-validated."""
        return cls(MappingProxyType({"$and": (first, second)}), And((first.root, second.root)))

    def __getitem__(self, key: str) -> object:
        return self._spec[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._spec)

    def __len__(self) -> int:
        return len(self._spec)

    def __repr__(self) -> str:
        return f"MetadataFilter({_plain(self._spec)!r})"


def _plain(value: object) -> object:
    """The canonical copy with dicts for its read-only mappings, for ``repr``."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    return value


class _Budget:
    """Counts conditions and operand values across the whole filter."""

    def __init__(self) -> None:
        self.conditions = 0
        self.values = 0

    def add(self, conditions: int, values: int = 0) -> None:
        self.conditions += conditions
        self.values += values
        if self.conditions > MAX_FILTER_CONDITIONS:
            raise RagValidationError(f"Filters may hold at most {MAX_FILTER_CONDITIONS} conditions.")
        if self.values > MAX_FILTER_VALUES:
            raise RagValidationError(f"Filters may hold at most {MAX_FILTER_VALUES} values in all.")


def parse_mapping(filters: Mapping[str, object]) -> MetadataFilter:
    """Validate a non-empty filter mapping."""
    root, spec = _filter(filters, 1, _Budget())
    return MetadataFilter(spec, root)


def _filter(spec: object, depth: int, budget: _Budget) -> tuple[FilterNode, Mapping[str, object]]:
    if not isinstance(spec, Mapping):
        raise RagValidationError(_NOT_A_MAPPING)
    if depth > MAX_FILTER_DEPTH:
        raise RagValidationError(f"Filters may nest at most {MAX_FILTER_DEPTH} levels deep.")
    if not spec:
        raise RagValidationError("Filters inside $and, $or and $not must not be empty.")
    if len(spec) > MAX_FILTER_CONDITIONS:
        raise RagValidationError(f"Filters may hold at most {MAX_FILTER_CONDITIONS} conditions.")
    nodes: list[FilterNode] = []
    canonical: dict[str, object] = {}
    for key, value in spec.items():
        node, plain = _entry(key, value, depth, budget)
        nodes.append(node)
        canonical[key] = plain
    return _all(nodes), MappingProxyType(canonical)


def _all(nodes: list[FilterNode]) -> FilterNode:
    return nodes[0] if len(nodes) == 1 else And(tuple(nodes))


def _entry(key: object, value: object, depth: int, budget: _Budget) -> tuple[FilterNode, object]:
    if not isinstance(key, str) or not key.strip() or UNSTORABLE.search(key):
        raise RagValidationError(_BAD_KEY)
    if key in ("$and", "$or"):
        return _combination(key, value, depth, budget)
    if key == "$not":
        budget.add(1)
        clause, plain = _filter(value, depth + 1, budget)
        return Not(clause), plain
    if key.startswith("$"):
        raise RagValidationError(_BAD_OPERATOR)
    if isinstance(value, Mapping):
        return _operators(key, value, budget)
    budget.add(1, 1)
    operand = filter_value(value)
    return Compare(key, Comparison.EQ, _for_equality(operand)), operand.value


def _combination(key: str, value: object, depth: int, budget: _Budget) -> tuple[FilterNode, object]:
    if not isinstance(value, list | tuple) or not value:
        raise RagValidationError("Filter $and and $or take a non-empty list of filters.")
    if len(value) > MAX_FILTER_CONDITIONS:
        raise RagValidationError(f"Filters may hold at most {MAX_FILTER_CONDITIONS} conditions.")
    budget.add(1)
    parts = [_filter(item, depth + 1, budget) for item in value]
    clauses = tuple(node for node, _ in parts)
    return (And(clauses) if key == "$and" else Or(clauses)), tuple(plain for _, plain in parts)


def _operators(key: str, operators: Mapping[object, object], budget: _Budget) -> tuple[FilterNode, object]:
    if not operators:
        raise RagValidationError("Filter conditions on a key must name at least one operator.")
    if len(operators) > len(_FIELD_OPERATORS):
        raise RagValidationError(_BAD_OPERATOR)
    nodes: list[FilterNode] = []
    canonical: dict[str, object] = {}
    for name, operand in operators.items():
        if not isinstance(name, str) or name not in _FIELD_OPERATORS:
            raise RagValidationError(_BAD_OPERATOR)
        node, plain = _operator(key, name, operand, budget)
        nodes.append(node)
        canonical[name] = plain
    return _all(nodes), MappingProxyType(canonical)


def _operator(key: str, name: str, operand: object, budget: _Budget) -> tuple[FilterNode, object]:
    if name == "$exists":
        if not isinstance(operand, bool):
            raise RagValidationError("Filter $exists takes true or false.")
        budget.add(1)
        return Exists(key, bool(operand)), bool(operand)
    if name in ("$in", "$nin"):
        return _member(key, operand, negated=name == "$nin", budget=budget)
    budget.add(1, 1)
    op = Comparison(name)
    value = filter_value(operand)
    if op in _RANGES:
        if value.kind is ValueKind.BOOLEAN:
            raise RagValidationError("Filter ranges compare numbers, strings, dates or datetimes, never booleans.")
        return Compare(key, op, value), value.value
    return Compare(key, op, _for_equality(value)), value.value


def _member(key: str, operand: object, *, negated: bool, budget: _Budget) -> tuple[FilterNode, object]:
    if not isinstance(operand, list | tuple):
        raise RagValidationError("Filter $in and $nin take a list of values.")
    if len(operand) > MAX_FILTER_IN_VALUES:
        raise RagValidationError(f"Filter $in and $nin take at most {MAX_FILTER_IN_VALUES} values.")
    budget.add(1, len(operand))
    values = [filter_value(item) for item in operand]
    node = Member(key, tuple(_for_equality(value) for value in values), negated)
    return node, tuple(value.value for value in values)


def _for_equality(value: FilterValue) -> FilterValue:
    """A date equals exactly the one metadata string that writes it, ``YYYY-MM-DD``: equality with a
    date is equality with that string (which a store's equality index then serves)."""
    if value.kind is ValueKind.DATE:
        return FilterValue(ValueKind.STRING, value.text, value.text, value.text)
    return value
