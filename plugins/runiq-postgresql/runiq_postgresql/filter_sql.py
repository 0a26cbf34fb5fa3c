"""A validated metadata filter as one parameterised SQL condition over a ``jsonb`` metadata column.

:func:`compile_filter` turns the tree of :mod:`runiq.rag._stores.filters` into a boolean SQL
expression whose every key and value is a bound parameter (``$n``; the SQL text holds only
operators, casts and constants of this module), with the semantics of the reference evaluation
``runiq.rag._stores.filters.matches`` (tests run both on the same rows). The column must be a
``NOT NULL`` ``jsonb`` object.

What an index serves (a ``GIN (metadata jsonb_path_ops)`` index):

- ``$eq`` and ``$in`` on booleans, numbers, strings and dates, up to :data:`MAX_CONTAINED_VALUES`
  values, become ``metadata @> ANY($n::jsonb[])`` over ``{"key": value}`` and ``{"key": [value]}`` (so
  a list holding the value matches): GIN containment, a bitmap index scan. ``jsonb`` compares
  numbers as decimals and strings byte for byte, which is the filter equality.
- Larger ``$in`` sets are one hashed ``IN`` per element of the row's value: no index, but a constant
  cost per row (rechecking each row the index returns against thousands of containment documents
  costs about a millisecond).
- ``$ne``, ``$nin`` and ``$not`` are the negation of such a test plus ``metadata ? key``; they narrow
  rows already found by an indexed conjunct but are not served by the index themselves.
- Ranges, datetime equality and ``$exists`` test each row's value (a list element by element, through
  ``jsonb_array_elements``): no index. Strings order with ``COLLATE "C"`` (code points, as UTF-8
  bytes), numbers as ``numeric``. A date is compared as its ``YYYY-MM-DD`` text after a calendar
  check, a datetime as its instant in integer microseconds after a field check, each inside ``CASE``
  so that no cast ever sees text it could fail on: a malformed value never matches and never raises.

Operands are typed parameters (``$n::numeric``, ``$n::jsonb[]``), never casts of text: a prepared
statement's generic plan would repeat a cast on every row.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal

from runiq.errors import RagValidationError
from runiq.rag.providers import (
    DATE_PATTERN,
    DATETIME_PATTERN,
    And,
    Compare,
    Comparison,
    Exists,
    FilterNode,
    FilterSpec,
    FilterValue,
    Member,
    Not,
    Or,
    ValueKind,
    parse_filter,
)

__all__ = ["MAX_CONTAINED_VALUES", "SqlFilter", "compile_filter", "compile_filters"]

# Up to this many $eq/$in values are one containment test the GIN index serves; each row it returns
# is rechecked against every containment document, so larger sets are hashed instead (no index).
MAX_CONTAINED_VALUES = 16

_COLUMN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?")
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_CONTAINED_KINDS = frozenset({ValueKind.BOOLEAN, ValueKind.NUMBER, ValueKind.STRING})
# The JSON type of the metadata values an operand of each kind compares with.
_JSON_TYPES = {
    ValueKind.NUMBER: "number",
    ValueKind.STRING: "string",
    ValueKind.DATE: "string",
    ValueKind.DATETIME: "string",
}
_SQL_OPERATORS = {
    Comparison.EQ: "=",
    Comparison.GT: ">",
    Comparison.GTE: ">=",
    Comparison.LT: "<",
    Comparison.LTE: "<=",
}


@dataclass(frozen=True, slots=True)
class SqlFilter:
    """``sql`` is a boolean expression; ``parameters`` are the values of its ``$first...$last`` in order."""

    sql: str
    parameters: tuple[object, ...]


def compile_filters(
    filters: FilterSpec | None, *, column: str = "metadata", first_parameter: int = 1
) -> SqlFilter | None:
    """Validate ``filters`` (:func:`~runiq.rag._stores.filters.parse_filter`) and compile them; ``None``
    when there is no filter. Raises ``RagValidationError`` for a filter no store accepts."""
    node = parse_filter(filters)
    return None if node is None else compile_filter(node, column=column, first_parameter=first_parameter)


def compile_filter(node: FilterNode, *, column: str = "metadata", first_parameter: int = 1) -> SqlFilter:
    """``node`` as SQL over ``column`` (an identifier, optionally qualified: ``c.metadata``), with
    placeholders numbered from ``first_parameter`` (after the query's own parameters)."""
    if _COLUMN.fullmatch(column) is None:
        raise RagValidationError("The filter column must be a plain SQL identifier.")
    if isinstance(first_parameter, bool) or not isinstance(first_parameter, int) or first_parameter < 1:
        raise RagValidationError("The first filter parameter must be a positive integer.")
    compiler = _Compiler(column, first_parameter)
    return SqlFilter(compiler.node(node), tuple(compiler.parameters))


class _Compiler:
    def __init__(self, column: str, first_parameter: int) -> None:
        self.column = column
        self.first = first_parameter
        self.parameters: list[object] = []

    def bind(self, value: object, cast: str) -> str:
        self.parameters.append(value)
        return f"${self.first + len(self.parameters) - 1}::{cast}"

    def node(self, node: FilterNode) -> str:
        match node:
            case And(clauses):
                return "(" + " AND ".join(self.node(clause) for clause in clauses) + ")"
            case Or(clauses):
                return "(" + " OR ".join(self.node(clause) for clause in clauses) + ")"
            case Not(clause):
                return f"(NOT {self.node(clause)})"
            case Exists(key, present):
                return self.has_key(key) if present else f"(NOT {self.has_key(key)})"
            case Member(key, values, negated):
                return self.equality(key, values, negated=negated)
            case Compare(key, op, value):
                if op in (Comparison.EQ, Comparison.NE):
                    return self.equality(key, (value,), negated=op is Comparison.NE)
                return self.elements(key, [(op, value)])

    def has_key(self, key: str) -> str:
        return f"({self.column} ? {self.bind(key, 'text')})"

    def equality(self, key: str, values: tuple[FilterValue, ...], *, negated: bool) -> str:
        """Some element equals some value; negated: the key is present and no element does."""
        contained = [value for value in values if value.kind in _CONTAINED_KINDS]
        compared = [(Comparison.EQ, value) for value in values if value.kind not in _CONTAINED_KINDS]
        tests: list[str] = []
        if 0 < len(contained) <= MAX_CONTAINED_VALUES:
            documents = [_JSON.encode({key: shape(value.value)}) for value in contained for shape in (_same, _listed)]
            tests.append(f"{self.column} @> ANY({self.bind(documents, 'jsonb[]')})")
        elif contained:
            tests.append(self.member(key, [_JSON.encode(value.value) for value in contained]))
        if compared:
            tests.append(self.elements(key, compared))
        found = "(" + " OR ".join(tests) + ")" if tests else "false"
        return f"({self.has_key(key)} AND NOT {found})" if negated else found

    def member(self, key: str, values: list[str]) -> str:
        """Some element of the key's value is one of ``values`` (JSON texts): one hash lookup per
        element, the set hashed once per statement (an uncorrelated ``IN`` subquery inside an
        expression is a hashed SubPlan; ``coalesce`` keeps the planner from making it a join)."""
        value = f"({self.column} -> {self.bind(key, 'text')})"
        members = f"(SELECT unnest({self.bind(values, 'jsonb[]')}))"
        listed = (
            f"EXISTS (SELECT 1 FROM jsonb_array_elements({value}) AS e(v) "  # noqa: S608 - values are $n
            f"WHERE coalesce(e.v IN {members}, false))"
        )
        scalar = f"coalesce({value} IN {members}, false)"
        return f"(CASE WHEN jsonb_typeof({value}) = 'array' THEN {listed} ELSE {scalar} END)"

    def elements(self, key: str, tests: list[tuple[Comparison, FilterValue]]) -> str:
        """Some element of the key's value (a scalar is its own one element) passes one of ``tests``
        (all of one kind).

        A scalar is tested in place and only a list is expanded (``jsonb_array_elements`` in a
        subquery): a set-returning function per row costs several times the comparison itself.
        """
        kinds = {value.kind for _, value in tests}
        assert len(kinds) == 1  # one range, or the datetimes of one $eq/$in
        key_sql = self.bind(key, "text")
        value, text = f"({self.column} -> {key_sql})", f"({self.column} ->> {key_sql})"
        operands = [(op, item, self.operand(item)) for op, item in tests]
        json_type = _JSON_TYPES[kinds.pop()]
        scalar = " OR ".join(_comparison(op, item, operand, value, text) for op, item, operand in operands)
        each = " OR ".join(_comparison(op, item, operand, "e.v", "(e.v #>> '{}')") for op, item, operand in operands)
        listed = (
            f"EXISTS (SELECT 1 FROM jsonb_array_elements({value}) AS e(v) "  # noqa: S608 - values are $n
            f"WHERE CASE WHEN jsonb_typeof(e.v) = '{json_type}' THEN ({each}) ELSE false END)"
        )
        return (
            f"(CASE jsonb_typeof({value}) WHEN '{json_type}' THEN ({scalar}) WHEN 'array' THEN {listed} ELSE false END)"
        )

    def operand(self, value: FilterValue) -> str:
        """The bound operand: a number as ``numeric``, a datetime as its instant (microseconds since
        0001-01-01T00:00Z), strings and dates as text. Typed parameters, not casts: a generic plan
        would repeat a cast on every row."""
        if value.kind is ValueKind.NUMBER:
            return self.bind(Decimal(value.text), "numeric")
        if value.kind is ValueKind.DATETIME:
            return self.bind(value.key, "int8")
        return self.bind(value.text, "text")


def _comparison(op: Comparison, value: FilterValue, operand: str, v: str, text: str) -> str:
    """``v`` (a ``jsonb`` value of ``value``'s JSON type; ``text`` its text) compared with ``operand``
    in ``value``'s kind: never NULL and never an error (malformed dates and datetimes are false)."""
    sql_op = _SQL_OPERATORS[op]
    if value.kind is ValueKind.NUMBER:
        return f"(({v})::numeric {sql_op} {operand})"
    if value.kind is ValueKind.STRING:
        return f'({text} COLLATE "C" {sql_op} {operand})'
    if value.kind is ValueKind.DATE:
        return (
            f"(CASE WHEN {text} ~ '^{DATE_PATTERN}$' "
            f'THEN {_valid_date(text)} AND {text} COLLATE "C" {sql_op} {operand} ELSE false END)'
        )
    return (  # a datetime
        f"(CASE WHEN {text} ~ '^{DATETIME_PATTERN}$' "
        f"THEN (CASE WHEN {_valid_datetime(text)} THEN {_instant(text)} {sql_op} {operand} "
        "ELSE false END) ELSE false END)"
    )


def _same(value: object) -> object:
    return value


def _listed(value: object) -> object:
    return [value]


def _int(text: str, start: int, length: int) -> str:
    return f"substr({text}, {start}, {length})::int"


def _valid_date(text: str) -> str:
    """For text matching DATE_PATTERN at its start (every cast below reads digits): a real day, year 1 to 9999."""
    year, month, day = _int(text, 1, 4), _int(text, 6, 2), _int(text, 9, 2)
    leap = f"(({year} % 4 = 0 AND {year} % 100 <> 0) OR {year} % 400 = 0)"
    days = (
        f"(CASE WHEN {month} IN (4, 6, 9, 11) THEN 30 "
        f"WHEN {month} = 2 THEN (CASE WHEN {leap} THEN 29 ELSE 28 END) ELSE 31 END)"
    )
    return f"({year} >= 1 AND {month} BETWEEN 1 AND 12 AND {day} BETWEEN 1 AND {days})"


def _offset(text: str) -> str:
    return f"right({text}, 6)"


def _valid_datetime(text: str) -> str:
    """For text matching DATETIME_PATTERN: a real day, hour 0-23, minute and second 0-59, offset below 24 h."""
    clock = f"{_int(text, 12, 2)} <= 23 AND {_int(text, 15, 2)} <= 59 AND {_int(text, 18, 2)} <= 59"
    zone = _offset(text)
    offset = (
        f"(CASE WHEN right({text}, 1) = 'Z' THEN true ELSE {_int(zone, 2, 2)} <= 23 AND {_int(zone, 5, 2)} <= 59 END)"
    )
    return f"({_valid_date(text)} AND {clock} AND {offset})"


def _instant(text: str) -> str:
    """The instant of a valid datetime text as microseconds since 0001-01-01T00:00Z (the key of
    ``filter_values.datetime_key``), in integer arithmetic: no timestamp type, time zone or DateStyle."""
    zone = _offset(text)
    day = f"(make_date({_int(text, 1, 4)}, {_int(text, 6, 2)}, {_int(text, 9, 2)}) - date '0001-01-01' + 1)"
    clock = f"({_int(text, 12, 2)} * 3600 + {_int(text, 15, 2)} * 60 + {_int(text, 18, 2)})"
    offset = (
        f"(CASE WHEN right({text}, 1) = 'Z' THEN 0 "
        f"ELSE (CASE WHEN substr({zone}, 1, 1) = '-' THEN -1 ELSE 1 END) "
        f"* ({_int(zone, 2, 2)} * 3600 + {_int(zone, 5, 2)} * 60) END)"
    )
    micros = f"rpad(coalesce(substring({text} from '[.]([0-9]{{1,6}})'), '0'), 6, '0')::bigint"
    return f"((({day}::bigint * 86400 + {clock} - {offset}) * 1000000) + {micros})"
