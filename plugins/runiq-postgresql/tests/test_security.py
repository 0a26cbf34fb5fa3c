"""Injection attempts are rejected or neutralised; database error text never reaches runiq errors."""

from __future__ import annotations

import dataclasses
import traceback

import asyncpg
import numpy as np
import pytest

from runiq.errors import VectorStoreUnavailableError
from runiq.rag.providers import IndexSpec, StoredDocument, parse_lexical_query
from runiq.rag.testing import CANARY, make_chunks
from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore
from runiq_postgresql.errors import guarded

HOSTILE_NAMES = [
    "x'; DROP TABLE documents; --",
    'x"; DROP SCHEMA public CASCADE; --',
    "name) OR 1=1 --",
    "$1::text",
    "ünïcødé\u202e-name",
]


@pytest.mark.parametrize(
    "schema", ["runiq;drop schema public", 'a"b', "pg_catalog", "1abc", "", "a" * 64, "a b", "runiq--"]
)
def test_hostile_schema_names_are_rejected(schema: str) -> None:
    """The schema is an identifier: only letters, digits and underscores, never pg_*."""
    with pytest.raises(ValueError, match="schema"):
        PostgresStoreOptions(schema=schema)


@pytest.mark.parametrize("name", HOSTILE_NAMES)
async def test_hostile_index_names_are_plain_values(pg_store: PostgresVectorStore, name: str) -> None:
    """An index name is only ever a bound value: it round-trips and executes nothing."""
    await pg_store.ensure_index(IndexSpec(name=name, dimensions=3, embedding_model="m"))
    await pg_store.replace_document(
        name, StoredDocument(document_id=name, content_hash="h"), make_chunks(name, ["policy text"]), np.eye(1, 3)
    )
    hits = await pg_store.search(name, np.array([1, 0, 0], dtype=np.float32), top_k=5)
    assert [h.document_id for h in hits] == [name]
    assert set(await pg_store.document_hashes(name)) == {name}
    assert await pg_store.count(name) == 1


async def test_hostile_metadata_filters_are_neutralised(pg_store: PostgresVectorStore) -> None:
    """Keys and values with quotes, SQL and jsonb operators are matched literally."""
    await pg_store.ensure_index(IndexSpec(name="meta", dimensions=3, embedding_model="m"))
    nasty = {"team' OR '1'='1": "a", 'k"}': "v' || pg_sleep(5) --", "path->>x": "1"}
    chunks = make_chunks("d1", ["policy text"])
    chunks = [dataclasses.replace(chunk, metadata=nasty) for chunk in chunks]
    await pg_store.replace_document("meta", StoredDocument(document_id="d1", content_hash="h"), chunks, np.eye(1, 3))
    query = np.array([1, 0, 0], dtype=np.float32)
    for key, value in nasty.items():
        assert [h.document_id for h in await pg_store.search("meta", query, top_k=5, filters={key: value})] == ["d1"]
    assert await pg_store.search("meta", query, top_k=5, filters={"team' OR '1'='1": "b"}) == []
    assert await pg_store.search("meta", query, top_k=5, filters={"x') OR true --": "1"}) == []
    lexical = await pg_store.lexical_search(
        "meta", parse_lexical_query("policy"), top_k=5, filters={'k"}': "v' || pg_sleep(5) --"}
    )
    assert [h.document_id for h in lexical] == ["d1"]


async def test_hostile_lexical_text_is_data(pg_store: PostgresVectorStore) -> None:
    """tsquery and LIKE syntax inside a query is quoted, never interpreted."""
    await pg_store.ensure_index(IndexSpec(name="lex", dimensions=None))
    await pg_store.replace_document(
        "lex", StoredDocument(document_id="d1", content_hash="h"), make_chunks("d1", ["it's 100% a:b"]), None
    )
    for text in ["it's", "'&|!<->:*", "100%", "a:b", "_%\\", "x') | ('y", '"it\'s 100"']:
        await pg_store.lexical_search("lex", parse_lexical_query(text), top_k=5)
    assert [h.document_id for h in await pg_store.lexical_search("lex", parse_lexical_query("it's"), top_k=5)] == ["d1"]
    assert [h.document_id for h in await pg_store.lexical_search("lex", parse_lexical_query("100%"), top_k=5)] == ["d1"]


async def test_database_error_text_never_reaches_the_mapped_error(postgres_dsn: str, schema: str) -> None:
    """A unique violation's DETAIL echoes the value; the mapped error keeps only the SQLSTATE."""
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await conn.execute(f'CREATE SCHEMA "{schema}"; CREATE TABLE "{schema}".t (v text PRIMARY KEY)')
        await conn.execute(f'INSERT INTO "{schema}".t VALUES ($1)', CANARY)
        with pytest.raises(VectorStoreUnavailableError) as caught:
            await guarded(conn.execute(f'INSERT INTO "{schema}".t VALUES ($1)', CANARY))
    finally:
        await conn.close()
    error = caught.value
    assert error.sqlstate == "23505"
    assert error.__cause__ is None
    assert error.__context__ is None
    text = str(error) + repr(error) + "".join(traceback.format_exception(error))
    assert CANARY not in text
    assert postgres_dsn not in text
