"""The filter compiler against the real server: its SQL selects what the reference evaluation selects.

Each test runs the compiled condition directly (``SELECT id FROM t WHERE <condition>``) on a scratch
table with a ``jsonb`` column and the store's GIN index, and compares with
``runiq.rag._stores.filters.matches`` over the same metadata.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import runiq_postgresql.filter_sql as filter_sql_module
from runiq.rag import RagValidationError
from runiq.rag._stores.filter_tree import And, Compare, Comparison, Exists
from runiq.rag._stores.filter_values import date_key, datetime_key, filter_value
from runiq.rag._stores.filters import matches, parse_filter
from runiq.rag.testing import CANARY
from runiq.rag.testing.filter_cases import FILTER_CASES, FILTER_ROWS, HOSTILE_FILTERS
from runiq.rag.testing.filter_strategies import date_texts, datetime_texts, filters, metadata_rows
from runiq_postgresql.filter_sql import MAX_CONTAINED_VALUES, SqlFilter, compile_filter, compile_filters

_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


@pytest.fixture
async def conn(postgres_dsn: str, schema: str) -> AsyncIterator[asyncpg.Connection]:
    """A connection whose search path is a fresh schema holding ``t(id, metadata jsonb)`` with a GIN index."""
    connection = await asyncpg.connect(postgres_dsn)
    try:
        await connection.execute(f'CREATE SCHEMA "{schema}"; SET search_path TO "{schema}"')
        await connection.execute(
            "CREATE TABLE t (id int PRIMARY KEY, metadata jsonb NOT NULL DEFAULT '{}');"
            "CREATE INDEX t_metadata ON t USING gin (metadata jsonb_path_ops)"
        )
        yield connection
    finally:
        await connection.close()


async def _load(conn: asyncpg.Connection, rows: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> None:
    await conn.execute("TRUNCATE t")
    await conn.executemany(
        "INSERT INTO t VALUES ($1, $2::text::jsonb)", [(i, _JSON.encode(r)) for i, r in enumerate(rows)]
    )


async def _selected(conn: asyncpg.Connection, spec: Any) -> list[int]:
    compiled = compile_filters(spec)
    assert compiled is not None
    return [
        row["id"]
        for row in await conn.fetch(f"SELECT id FROM t WHERE {compiled.sql} ORDER BY id", *compiled.parameters)
    ]


def _reference(rows: list[dict[str, Any]] | tuple[dict[str, Any], ...], spec: Any) -> list[int]:
    node = parse_filter(spec)
    assert node is not None
    return [i for i, row in enumerate(rows) if matches(node, row)]


@pytest.mark.parametrize(("spec", "expected"), [pytest.param(f, e, id=i) for i, f, e in FILTER_CASES])
async def test_the_contract_cases_select_their_rows(
    conn: asyncpg.Connection, spec: dict[str, Any], expected: tuple[int, ...]
) -> None:
    """Every documented case (operators, lists, dates, datetimes, a hostile key) selects its rows."""
    await _load(conn, FILTER_ROWS)
    assert await _selected(conn, spec) == list(expected)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(metadata_rows(), max_size=8), specs=st.lists(filters(), min_size=1, max_size=4))
async def test_compiled_filters_select_what_the_reference_selects(
    conn: asyncpg.Connection, rows: list[dict[str, Any]], specs: list[dict[str, Any]]
) -> None:
    """On any metadata (lists, numbers at the 64-bit and float edges, near-miss dates and datetimes, any
    Unicode) and any filter, PostgreSQL and ``matches`` select the same rows, and nothing raises."""
    await _load(conn, rows)
    for spec in specs:
        assert await _selected(conn, spec) == _reference(rows, spec), spec


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(metadata_rows(), max_size=8), specs=st.lists(filters(), min_size=1, max_size=4))
async def test_hashed_membership_selects_what_containment_selects(
    conn: asyncpg.Connection, monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, Any]], specs: list[dict[str, Any]]
) -> None:
    """The form of large $in sets (a hashed ``IN`` per element), forced for every equality here, has
    the reference semantics too (numbers by value, booleans apart, lists by element)."""
    monkeypatch.setattr(filter_sql_module, "MAX_CONTAINED_VALUES", 0)
    await _load(conn, rows)
    for spec in specs:
        assert await _selected(conn, spec) == _reference(rows, spec), spec


async def test_large_in_sets_cost_a_hash_lookup_per_row(conn: asyncpg.Connection) -> None:
    """1,000 values: the set is hashed once per statement (not a containment document per value per
    row, which took a millisecond a row); $nin and lists of values too. Smaller sets stay indexed."""
    rows = [{"team": f"t{i % 500}", "tags": [f"g{i % 97}", i % 5, True]} for i in range(5_000)]
    await _load(conn, rows)
    values = ["t7", 3, *(f"x{i}" for i in range(998))]
    for spec in (
        {"team": {"$in": values}},
        {"team": {"$nin": values}},
        {"tags": {"$in": ["g3", *(f"y{i}" for i in range(999))]}},
        {"tags": {"$nin": [4, 4.0, *range(100, 1098)]}},
        {"$not": {"team": {"$in": values}}},
    ):
        compiled = compile_filters(spec)
        assert compiled is not None
        assert "@>" not in compiled.sql
        lines = await conn.fetch(f"EXPLAIN SELECT id FROM t WHERE {compiled.sql}", *compiled.parameters)
        assert "hashed SubPlan" in "\n".join(line[0] for line in lines), spec
        assert await _selected(conn, spec) == _reference(rows, spec), spec
    small = compile_filters({"team": {"$in": values[:MAX_CONTAINED_VALUES]}})
    assert small is not None
    assert "@>" in small.sql


_PIVOTS = st.one_of(
    st.dates(),
    st.datetimes(timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30))])),
    st.sampled_from([date(1, 1, 1), date(1900, 2, 28), datetime(1, 1, 1, tzinfo=UTC)]),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.one_of(date_texts(), datetime_texts()), min_size=1, max_size=60), data=st.data())
async def test_date_and_datetime_checks_agree_on_every_field(
    conn: asyncpg.Connection, texts: list[str], data: st.DataObject
) -> None:
    """Many near-miss dates and datetimes at once (29 February 1900, hour 24, second 60, offset minute
    60, seven fraction digits): each side of a pivot, and equal to it, as Python says. Pivots are
    often one of the texts themselves, so instants a few hours apart are told apart."""
    rows = [{"a": text} for text in texts]
    await _load(conn, rows)
    valid = [_as_operand(text) for text in texts if date_key(text) is not None or datetime_key(text) is not None]
    own = bool(valid) and data.draw(st.booleans())
    pivot = data.draw(st.sampled_from(valid)) if own else data.draw(_PIVOTS)
    for op in ("$gte", "$lt", "$eq", "$ne"):
        spec = {"a": {op: pivot}}
        assert await _selected(conn, spec) == _reference(rows, spec), spec


def _as_operand(text: str) -> date:
    return date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)


async def test_string_ranges_use_code_point_order_whatever_the_database_collation() -> None:
    """This server's default collation already orders by code point (C.UTF-8), so the SQL shows what a
    linguistic default (en_US: "a" < "Z") would otherwise change: string comparisons are COLLATE "C"."""
    compiled = compile_filters({"k": {"$gt": "Z"}, "d": {"$lt": date(2024, 1, 1)}})
    assert compiled is not None
    assert compiled.sql.count('COLLATE "C"') == 4  # each range twice: on a scalar, on a list's elements


async def test_equality_and_in_use_the_gin_index_and_ranges_do_not(conn: asyncpg.Connection) -> None:
    """What the reference page documents: $eq/$in are GIN containment (a bitmap index scan)."""
    rows = [{"team": f"t{i % 500}", "year": 2000 + i % 25, "tags": [f"g{i % 97}", "all"]} for i in range(20_000)]
    await _load(conn, rows)
    await conn.execute("ANALYZE t")

    async def plan(spec: dict[str, Any]) -> str:
        compiled = compile_filters(spec)
        assert compiled is not None
        lines = await conn.fetch(f"EXPLAIN SELECT id FROM t WHERE {compiled.sql}", *compiled.parameters)
        return "\n".join(line[0] for line in lines)

    for spec in (
        {"team": "t7"},
        {"tags": "g3"},
        {"team": {"$in": ["t1", "t2"]}},
        {"team": "t7", "year": {"$gt": 2020}},
    ):
        assert "Bitmap Index Scan on t_metadata" in await plan(spec), spec
    assert "t_metadata" not in await plan({"year": {"$gt": 2020}})
    assert await _selected(conn, {"tags": "g3", "year": {"$gte": 2020}}) == _reference(
        rows, {"tags": "g3", "year": {"$gte": 2020}}
    )


async def test_every_key_and_value_is_a_parameter(conn: asyncpg.Connection) -> None:
    """The SQL text is the same whatever the keys and values: they only ever travel as parameters."""
    hostile = f"{CANARY}'); DROP TABLE t; --"
    spec = {
        hostile: {"$gt": hostile, "$ne": 1, "$nin": [hostile, 2.5]},
        "$or": [{hostile: {"$exists": True}}, {"k": {"$lt": hostile}}],
    }
    compiled = compile_filters(spec)
    assert compiled is not None
    assert CANARY not in compiled.sql
    assert "DROP" not in compiled.sql
    assert sum(CANARY in str(p) for p in compiled.parameters) >= 5
    plain = compile_filters(
        {"a": {"$gt": "x", "$ne": 1, "$nin": ["x", 2.5]}, "$or": [{"a": {"$exists": True}}, {"k": {"$lt": "x"}}]}
    )
    assert plain is not None
    assert plain.sql == compiled.sql
    await _load(conn, [{hostile: "zzz"}, {hostile: hostile}])
    assert await _selected(conn, spec) == [0]
    assert await conn.fetchval("SELECT count(*) FROM t") == 2


async def test_placeholders_follow_the_querys_own_parameters(conn: asyncpg.Connection) -> None:
    """``first_parameter`` numbers the filter's placeholders after those the query already uses."""
    await _load(conn, FILTER_ROWS)
    compiled = compile_filters({"team": "hr", "year": {"$gte": 2024}}, column="c.metadata", first_parameter=3)
    assert compiled is not None
    assert sorted(set(re.findall(r"\$(\d+)", compiled.sql))) == ["3", "4", "5"]
    rows = await conn.fetch(
        f"SELECT id FROM t AS c WHERE c.id >= $1 AND c.id < $2 AND {compiled.sql} ORDER BY id",
        0,
        100,
        *compiled.parameters,
    )
    assert [row["id"] for row in rows] == [0, 6]


@pytest.mark.parametrize("column", ["metadata; DROP TABLE t", 'c."metadata"', "1abc", "", "a.b.c", "metadata "])
def test_the_column_must_be_a_plain_identifier(column: str) -> None:
    with pytest.raises(RagValidationError, match="identifier"):
        compile_filters({"team": "hr"}, column=column)


@pytest.mark.parametrize("first", [0, -1, True, 1.5])
def test_the_first_parameter_must_be_positive(first: Any) -> None:
    with pytest.raises(RagValidationError, match="positive"):
        compile_filters({"team": "hr"}, first_parameter=first)


@pytest.mark.parametrize("spec", [pytest.param(f, id=i) for i, f in HOSTILE_FILTERS])
def test_hostile_filters_never_reach_sql(spec: Any) -> None:
    """The compiler validates first: the same fixed-message errors as every store."""
    with pytest.raises(RagValidationError, match=r"^Filter"):
        compile_filters(spec)


def test_no_filter_compiles_to_nothing_and_trees_compile_directly() -> None:
    assert compile_filters(None) is None
    assert compile_filters({}) is None
    node = And((Exists("a", True), Compare("b", Comparison.LT, filter_value(3))))
    compiled = compile_filter(node)
    assert isinstance(compiled, SqlFilter)
    assert compiled.parameters == ("a", "b", Decimal(3))
