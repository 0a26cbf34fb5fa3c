"""Free-text search reads without a transaction, and again in one snapshot when a write slipped in between.

``read_blocks`` and ``candidates`` run as two plain statements, each in its own snapshot; both return
the version of the index's row (its ``xmin``), which every write changes. A write that commits between
them makes the versions differ, and the search is read again in one repeatable-read transaction, so a
replaced document is found (old or new), never lost.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import asyncpg
import numpy as np
import pytest

from runiq.rag.providers import IndexSpec, InMemoryVectorStore, StoredDocument, parse_lexical_query
from runiq.rag.testing import make_chunks
from runiq_postgresql import PostgresVectorStore

QUERY = parse_lexical_query("remote policy")
CORPUS = {
    "doc-0": "remote policy remote policy for everyone",
    "doc-1": "the remote work policy of the team",
    "doc-2": "travel policy and expense report",
    "doc-3": "remote office hours",
    "doc-4": "policy on remote travel",
    "doc-5": "nothing to see here",
}
GROUPS = {"doc-0": 1, "doc-1": 2, "doc-2": 2, "doc-3": 2, "doc-4": 2, "doc-5": 3}


def _item(doc_id: str, text: str) -> tuple[StoredDocument, Any, Any]:
    metadata = {"group": GROUPS[doc_id]}
    chunks = [replace(chunk, metadata=metadata) for chunk in make_chunks(doc_id, [text])]
    return StoredDocument(document_id=doc_id, content_hash=text, metadata=metadata), chunks, np.ones((1, 3))


async def _both(pg: PostgresVectorStore) -> InMemoryVectorStore:
    memory = InMemoryVectorStore()
    for store in (pg, memory):
        await store.ensure_index(IndexSpec(name="snap", dimensions=3, embedding_model="m"))
        for doc_id, text in CORPUS.items():
            await store.replace_document("snap", *_item(doc_id, text))
    return memory


class _Statements:
    """The SQL the store's connections send (``fetch`` and ``execute``), in order."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sent: list[str] = []
        fetch, execute = asyncpg.Connection.fetch, asyncpg.Connection.execute

        async def fetching(conn: asyncpg.Connection, query: str, *args: object, **kwargs: Any) -> Any:
            self.sent.append(query)
            return await fetch(conn, query, *args, **kwargs)

        async def executing(conn: asyncpg.Connection, query: str, *args: object, **kwargs: Any) -> Any:
            self.sent.append(query)
            return await execute(conn, query, *args, **kwargs)

        monkeypatch.setattr(asyncpg.Connection, "fetch", fetching)
        monkeypatch.setattr(asyncpg.Connection, "execute", executing)

    @property
    def transactions(self) -> int:
        return sum(query.startswith("BEGIN") for query in self.sent)


def _slip_in(
    monkeypatch: pytest.MonkeyPatch, store: PostgresVectorStore, write: Callable[[], Awaitable[None]]
) -> list[bool]:
    """Run ``write`` once, right after the first search's postings are read (before its candidates);
    returns, per free-text read, whether it found one version of the index (False: it was read again)."""
    reader = store._lexical_reads
    read_postings, free_text_rows = reader._read_postings, reader._free_text_rows
    pending = [write]
    outcomes: list[bool] = []

    async def reading(*args: Any) -> Any:
        read = await read_postings(*args)
        while pending:
            await pending.pop()()
        return read

    async def ranking(*args: Any) -> Any:
        rows = await free_text_rows(*args)
        outcomes.append(rows is not None)
        return rows

    monkeypatch.setattr(reader, "_read_postings", reading)
    monkeypatch.setattr(reader, "_free_text_rows", ranking)
    return outcomes


async def test_a_free_text_search_is_two_statements_without_a_transaction(
    pg_store: PostgresVectorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = await _both(pg_store)
    index = await pg_store._require("snap")
    statements = _Statements(monkeypatch)
    hits = await pg_store.lexical_search("snap", QUERY, top_k=3)
    assert [h.key for h in hits] == [h.key for h in await memory.lexical_search("snap", QUERY, top_k=3)]
    assert statements.sent == [index.sql.read_blocks, index.sql.candidates]


async def test_a_replace_between_the_statements_is_read_again_in_one_snapshot(
    pg_store: PostgresVectorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the second read, the best document's old postings would name chunks already gone and it
    would vanish from the results; read again, it is found in its new version, ranked as in memory."""
    memory = await _both(pg_store)
    replacement = "remote policy in short"

    async def rewrite() -> None:
        await pg_store.replace_document("snap", *_item("doc-0", replacement))

    outcomes = _slip_in(monkeypatch, pg_store, rewrite)
    statements = _Statements(monkeypatch)
    hits = await pg_store.lexical_search("snap", QUERY, top_k=3)
    await memory.replace_document("snap", *_item("doc-0", replacement))
    expected = await memory.lexical_search("snap", QUERY, top_k=3)
    assert "doc-0" in [h.document_id for h in hits]
    assert [(h.key, h.content) for h in hits] == [(h.key, h.content) for h in expected]
    for actual, wanted in zip(hits, expected, strict=True):
        assert actual.raw_score == pytest.approx(wanted.raw_score, rel=1e-12)
    assert outcomes == [False, True]
    assert statements.transactions == 2  # the write's and the second read's


async def test_a_filtered_search_left_without_candidates_by_a_write_is_read_again(
    pg_store: PostgresVectorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The only chunk passing the filter is replaced in between: its old row is gone, so the candidates
    statement finds no chunk at all, and still reports the version it saw."""
    await _both(pg_store)

    async def rewrite() -> None:
        await pg_store.replace_document("snap", *_item("doc-0", "a remote policy once more"))

    outcomes = _slip_in(monkeypatch, pg_store, rewrite)
    hits = await pg_store.lexical_search("snap", QUERY, top_k=3, filters={"group": 1})
    assert [(h.document_id, h.content) for h in hits] == [("doc-0", "a remote policy once more")]
    assert outcomes == [False, True]


async def test_a_search_whose_candidates_all_fail_the_filter_is_empty_in_one_read(
    pg_store: PostgresVectorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _both(pg_store)
    index = await pg_store._require("snap")
    statements = _Statements(monkeypatch)
    assert await pg_store.lexical_search("snap", QUERY, top_k=3, filters={"group": 3}) == []
    assert statements.transactions == 0
    assert statements.sent[0] == index.sql.read_blocks
    assert len(statements.sent) == 2


async def test_a_write_after_both_statements_needs_no_second_read(
    pg_store: PostgresVectorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = await _both(pg_store)
    outcomes = _slip_in(monkeypatch, pg_store, lambda: _noop())
    hits = await pg_store.lexical_search("snap", QUERY, top_k=5)
    assert outcomes == [True]
    assert [h.key for h in hits] == [h.key for h in await memory.lexical_search("snap", QUERY, top_k=5)]


async def _noop() -> None:
    return None


async def test_every_write_changes_the_version_a_search_compares(
    pg_store: PostgresVectorStore, postgres_dsn: str
) -> None:
    """Replace (one and many, unchanged content too), delete (also of documents not there), writes in a
    bulk load: each changes the index row's ``xmin``; a dropped index has none."""
    await _both(pg_store)
    index = await pg_store._require("snap")
    conn = await asyncpg.connect(postgres_dsn)

    async def version() -> int | None:
        sql = f'SELECT xmin::text::int8 FROM "{pg_store.options.schema_name}".indexes WHERE index_id = $1'
        value: int | None = await conn.fetchval(sql, index.index_id)
        return value

    async def load() -> None:
        async with pg_store.bulk_load("snap"):
            await pg_store.replace_documents("snap", [_item("doc-3", "bulk remote")])

    writes: list[Callable[[], Awaitable[Any]]] = [
        lambda: pg_store.replace_document("snap", *_item("doc-1", "new remote text")),
        lambda: pg_store.replace_document("snap", *_item("doc-1", "new remote text")),
        lambda: pg_store.replace_documents("snap", [_item("doc-2", "two"), _item("doc-4", "four")]),
        lambda: pg_store.delete_documents("snap", ["doc-5"]),
        lambda: pg_store.delete_documents("snap", ["doc-404"]),
        load,
    ]
    try:
        seen = [await version()]
        for write in writes:
            await write()
            seen.append(await version())
        assert None not in seen
        assert len(set(seen)) == len(seen)
        await pg_store.drop_index("snap")
        assert await version() is None
    finally:
        await conn.close()
