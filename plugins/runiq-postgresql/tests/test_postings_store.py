"""The postings table through the store: it always equals the chunk table, and searches from it stay exact."""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace
from typing import Any

import asyncpg
import numpy as np
import pytest

from runiq.rag.providers import IndexSpec, InMemoryVectorStore, StoredDocument, parse_lexical_query
from runiq.rag.testing import make_chunks
from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore, ranking
from runiq_postgresql.postings import gather

COMMON = ["remote", "work", "policy", "travel", "expense", "office", "team", "report", "the", "of"]
RARE = [f"rare{i}" for i in range(40)]


def _corpus(seed: int, documents: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    corpus = {}
    for d in range(documents):
        chunks = []
        for _ in range(rng.randint(1, 3)):
            words = [rng.choice(COMMON) for _ in range(rng.randint(2, 30))] + rng.sample(RARE, rng.randint(0, 2))
            rng.shuffle(words)
            chunks.append(" ".join(words))
        corpus[f"doc-{d:03d}"] = chunks
    return corpus


def _item(doc_id: str, texts: list[str]) -> tuple[StoredDocument, Any, Any]:
    metadata = {"group": sum(map(ord, doc_id)) % 5}
    chunks = [replace(chunk, metadata=metadata) for chunk in make_chunks(doc_id, texts)]
    document = StoredDocument(document_id=doc_id, content_hash=str(hash(tuple(texts))), metadata=metadata)
    return document, chunks, np.ones((len(texts), 3), dtype=np.float32)


async def _write(store: Any, name: str, corpus: dict[str, list[str]], *, bulk: bool) -> None:
    """Through the bulk path (PostgreSQL's ``replace_documents``) or one ``replace_document`` per document."""
    if bulk and isinstance(store, PostgresVectorStore):
        await store.replace_documents(name, [_item(d, t) for d, t in corpus.items()])
        return
    for doc_id, texts in corpus.items():
        await store.replace_document(name, *_item(doc_id, texts))


async def _postings(conn: asyncpg.Connection, table: str) -> set[tuple[str, int, int, int]]:
    """(lexeme, row_id, tf, length) for every posting not tombstoned."""
    blocks = await conn.fetch(f"SELECT term, dead, high, wide, rows, tfs, lengths FROM {table}")
    out = set()
    for term in {b["term"] for b in blocks}:
        g = gather([b for b in blocks if b["term"] == term], [term])
        dead = set(g.dead.tolist())
        out |= {
            (term, int(r), int(t), int(n))
            for r, t, n in zip(g.rows, g.tfs, g.lengths, strict=True)
            if int(r) not in dead
        }
    return out


async def _recount(conn: asyncpg.Connection, table: str) -> set[tuple[str, int, int, int]]:
    rows = await conn.fetch(
        f"SELECT u.lexeme, c.row_id, cardinality(u.positions) AS tf, c.term_count FROM {table} c, unnest(c.lexemes) u"
    )
    return {(r["lexeme"], r["row_id"], r["tf"], r["term_count"]) for r in rows}


async def _assert_consistent(store: PostgresVectorStore, name: str, dsn: str) -> None:
    index = await store._require(name)
    conn = await asyncpg.connect(dsn)
    try:
        assert await _postings(conn, index.sql.postings) == await _recount(conn, index.sql.table)
    finally:
        await conn.close()


async def _assert_same_ranking(pg: PostgresVectorStore, memory: InMemoryVectorStore, name: str, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(25):
        text = " ".join(rng.sample(COMMON, rng.randint(1, 4)) + rng.sample(RARE, rng.randint(0, 2)))
        query = parse_lexical_query(text)
        for top_k, filters in ((1, None), (5, None), (10, {"group": 3})):
            expected = await memory.lexical_search(name, query, top_k=top_k, filters=filters)
            actual = await pg.lexical_search(name, query, top_k=top_k, filters=filters)
            assert [h.key for h in actual] == [h.key for h in expected], (text, top_k, filters)
            for a, e in zip(actual, expected, strict=True):
                assert a.raw_score == pytest.approx(e.raw_score, rel=1e-12, abs=1e-12)


async def _both(pg: PostgresVectorStore, name: str) -> InMemoryVectorStore:
    memory = InMemoryVectorStore()
    for store in (pg, memory):
        await store.ensure_index(IndexSpec(name=name, dimensions=3, embedding_model="m"))
    return memory


@pytest.mark.parametrize("bulk", [False, True])
async def test_postings_follow_writes_replacements_and_deletions(
    pg_store: PostgresVectorStore, postgres_dsn: str, bulk: bool
) -> None:
    """After every kind of write the live postings are exactly the chunk table's lexemes, and rankings
    (scores, ties, filters) equal the in-memory store's."""
    memory = await _both(pg_store, "p")
    for store in (pg_store, memory):
        await _write(store, "p", _corpus(1, 60), bulk=bulk)
        await _write(store, "p", dict(list(_corpus(2, 60).items())[:25]), bulk=bulk)  # replaces 25 documents
        await store.delete_documents("p", [f"doc-{d:03d}" for d in range(30, 45)])
    await _assert_consistent(pg_store, "p", postgres_dsn)
    await _assert_same_ranking(pg_store, memory, "p", seed=7)


async def test_tombstones_are_purged_once_they_are_a_quarter_of_a_lexemes_postings(
    pg_store: PostgresVectorStore, postgres_dsn: str
) -> None:
    await _both(pg_store, "purge")
    await _write(pg_store, "purge", {f"doc-{d:02d}": [f"shared word{d}"] for d in range(40)}, bulk=True)
    index = await pg_store._require("purge")
    dead = f"SELECT coalesce(sum(size), 0) FROM {index.sql.postings} WHERE term = 'shared' AND dead"
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await pg_store.delete_documents("purge", [f"doc-{d:02d}" for d in range(9)])
        assert await conn.fetchval(dead) == 9  # 9 tombstones for 40 postings: kept
        await pg_store.delete_documents("purge", ["doc-09"])
        assert await conn.fetchval(dead) == 0  # 10, a quarter: the lexeme is rewritten without them
        assert await conn.fetchval(f"SELECT count(*) FROM {index.sql.postings} WHERE term = 'word3'") == 0
    finally:
        await conn.close()
    await _assert_consistent(pg_store, "purge", postgres_dsn)


async def test_many_small_writes_leave_few_blocks_per_lexeme(pg_store: PostgresVectorStore, postgres_dsn: str) -> None:
    """Blocks of a size class merge four at a time: 64 one-chunk writes leave one block of 64."""
    await _both(pg_store, "merge")
    await _write(pg_store, "merge", {f"doc-{d:02d}": [f"common unique{d}"] for d in range(64)}, bulk=False)
    index = await pg_store._require("merge")
    conn = await asyncpg.connect(postgres_dsn)
    try:
        sizes = await conn.fetch(f"SELECT size FROM {index.sql.postings} WHERE term = 'common'")
    finally:
        await conn.close()
    assert [row["size"] for row in sizes] == [64]
    await _assert_consistent(pg_store, "merge", postgres_dsn)


async def test_a_chunk_gone_behind_its_postings_is_skipped(pg_store: PostgresVectorStore, postgres_dsn: str) -> None:
    """Readers never trust a posting alone: a chunk that is gone is not returned, the next best are."""
    memory = await _both(pg_store, "lost")
    corpus = {f"doc-{d:02d}": ["remote " * (d % 4 + 1) + "work"] for d in range(12)}
    for store in (pg_store, memory):
        await _write(store, "lost", corpus, bulk=True)
    gone = {"doc-03", "doc-07"}  # the best scores for "remote"
    index = await pg_store._require("lost")
    conn = await asyncpg.connect(postgres_dsn)
    try:  # the chunks vanish, their postings (and the statistics) stay
        await conn.execute(f"DELETE FROM {index.sql.table} WHERE document_id = ANY($1::text[])", sorted(gone))
    finally:
        await conn.close()
    for top_k in (1, 3, 10):
        hits = await memory.lexical_search("lost", parse_lexical_query("remote"), top_k=top_k + len(gone))
        expected = [h.key for h in hits if h.document_id not in gone][:top_k]
        actual = await pg_store.lexical_search("lost", parse_lexical_query("remote"), top_k=top_k)
        assert [h.key for h in actual] == expected


async def test_selective_filters_fetch_candidates_in_several_batches(
    pg_store: PostgresVectorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = await _both(pg_store, "filters")
    corpus = _corpus(3, 150)
    for store in (pg_store, memory):
        await _write(store, "filters", corpus, bulk=True)
    fetched: list[int] = []
    original = ranking.ranked

    def counting(*args: Any) -> Any:
        for batch in original(*args):
            fetched.append(len(batch.rows))
            yield batch

    monkeypatch.setattr(ranking, "ranked", counting)
    query = parse_lexical_query("remote policy rare3")
    for group in range(5):
        expected = await memory.lexical_search("filters", query, top_k=10, filters={"group": group})
        actual = await pg_store.lexical_search("filters", query, top_k=10, filters={"group": group})
        assert [h.key for h in actual] == [h.key for h in expected]
    assert len(fetched) > 5  # some searches needed more than one batch


async def test_row_ids_past_32_bits_and_chunks_over_65535_words(
    pg_store: PostgresVectorStore, postgres_dsn: str
) -> None:
    """Blocks split by the row id's high half and by wide lengths; rankings do not notice."""
    memory = await _both(pg_store, "big")
    index = await pg_store._require("big")
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await conn.execute(f"SELECT setval(pg_get_serial_sequence('{index.sql.table}', 'row_id'), {2**32 - 6})")
        long_text = " ".join(f"w{i % 300}" for i in range(66_000)) + " remote"
        corpus = _corpus(4, 12) | {"doc-long": [long_text]}
        for store in (pg_store, memory):
            await _write(store, "big", corpus, bulk=False)
        flags = await conn.fetch(f"SELECT DISTINCT high, wide FROM {index.sql.postings}")
    finally:
        await conn.close()
    assert {(r["high"], r["wide"]) for r in flags} >= {(0, False), (1, False), (1, True)}
    await _assert_consistent(pg_store, "big", postgres_dsn)
    await _assert_same_ranking(pg_store, memory, "big", seed=8)
    hits = await pg_store.lexical_search("big", parse_lexical_query("w7 remote"), top_k=3)
    expected = await memory.lexical_search("big", parse_lexical_query("w7 remote"), top_k=3)
    assert [h.key for h in hits] == [h.key for h in expected]


async def test_concurrent_writers_and_readers_keep_postings_consistent(
    options: PostgresStoreOptions, postgres_dsn: str
) -> None:
    """Writers of one index replace documents while readers search: no error, no deadlock, and the
    postings end equal to the chunk table, with rankings equal to the in-memory store's final state."""
    memory = InMemoryVectorStore()
    corpus = _corpus(5, 80)
    async with PostgresVectorStore(options.model_copy(update={"pool_max_size": 8})) as store:
        for s in (store, memory):
            await s.ensure_index(IndexSpec(name="busy", dimensions=3, embedding_model="m"))
            await _write(s, "busy", corpus, bulk=True)

        async def writer(w: int) -> None:
            for round_ in range(4):
                part = {d: t for i, (d, t) in enumerate(_corpus(10 + round_, 80).items()) if i % 4 == w}
                await _write(store, "busy", part, bulk=round_ % 2 == 0)
                await store.delete_documents("busy", [f"doc-{76 + w:03d}"])  # a document only w writes

        async def reader() -> None:
            for text in ["remote policy", "travel rare3 expense", "the of team"] * 4:
                await store.lexical_search("busy", parse_lexical_query(text), top_k=5)

        await asyncio.gather(*(writer(w) for w in range(4)), *(reader() for _ in range(3)))
        final = dict(corpus)
        for round_ in range(4):
            final.update(_corpus(10 + round_, 80))
        for doc in range(76, 80):
            final.pop(f"doc-{doc:03d}")
        await _write(memory, "busy", final, bulk=False)
        await memory.delete_documents("busy", [f"doc-{d:03d}" for d in range(76, 80)])
        await _assert_consistent(store, "busy", postgres_dsn)
        await _assert_same_ranking(store, memory, "busy", seed=9)


async def test_searches_reuse_the_blocks_they_read_and_stay_exact_across_writes(
    pg_store: PostgresVectorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A block once read is not read again (the server lists it without its columns); blocks that merges and
    purges replaced are simply no longer listed, so cached blocks never make a result stale."""
    memory = await _both(pg_store, "cache")
    for store in (pg_store, memory):
        await _write(store, "cache", _corpus(6, 60), bulk=True)
    index = await pg_store._require("cache")
    listed: list[tuple[set[int], set[int]]] = []  # per read: (blocks listed, blocks sent in full)
    original = asyncpg.Connection.fetch

    async def spying(self: asyncpg.Connection, query: str, *args: object, **kwargs: object) -> object:
        rows = await original(self, query, *args, **kwargs)
        if query == index.sql.read_blocks:
            ids = {i for row in rows if row["blocks"] is not None for i in row["blocks"]}  # type: ignore[attr-defined]
            listed.append((ids, {row["block"] for row in rows if row["blocks"] is None}))  # type: ignore[attr-defined]
        return rows

    monkeypatch.setattr(asyncpg.Connection, "fetch", spying)
    query = parse_lexical_query("remote policy rare4 team")
    await pg_store.lexical_search("cache", query, top_k=5)
    await pg_store.lexical_search("cache", query, top_k=5)
    assert listed[0][0]
    assert listed[0][1] == listed[0][0]  # read in full once,
    assert listed[1] == (listed[0][0], set())  # then held
    for round_ in range(3):
        for store in (pg_store, memory):
            await _write(store, "cache", dict(list(_corpus(20 + round_, 60).items())[:30]), bulk=round_ == 1)
            await store.delete_documents("cache", [f"doc-{d:03d}" for d in range(40 + 3 * round_, 43 + 3 * round_)])
        expected = await memory.lexical_search("cache", query, top_k=10)
        actual = await pg_store.lexical_search("cache", query, top_k=10)
        assert [h.key for h in actual] == [h.key for h in expected]
        assert listed[-1][1]  # the blocks the writes made are read,
        assert listed[-1][1] <= listed[-1][0]  # (merges may have replaced them all)
    await _assert_same_ranking(pg_store, memory, "cache", seed=10)


async def test_a_large_tie_group_is_cut_by_the_server(
    pg_store: PostgresVectorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thousands of chunks with one score: the k smallest identities come back, and only k rows."""
    await _both(pg_store, "ties")
    corpus = {f"doc-{d:04d}": [f"shared words here tag{d % 7}"] for d in range(3000)}
    await _write(pg_store, "ties", corpus, bulk=True)
    index = await pg_store._require("ties")
    returned: list[int] = []
    original = asyncpg.Connection.fetch

    async def spying(self: asyncpg.Connection, query: str, *args: object, **kwargs: object) -> object:
        rows = await original(self, query, *args, **kwargs)
        if query == index.sql.candidates:
            returned.append(len(rows))  # type: ignore[arg-type]
        return rows

    monkeypatch.setattr(asyncpg.Connection, "fetch", spying)
    hits = await pg_store.lexical_search("ties", parse_lexical_query("shared"), top_k=3)
    assert [h.document_id for h in hits] == ["doc-0000", "doc-0001", "doc-0002"]
    assert returned == [3]
    hits = await pg_store.lexical_search("ties", parse_lexical_query("shared tag5"), top_k=4)
    assert [h.document_id for h in hits] == ["doc-0005", "doc-0012", "doc-0019", "doc-0026"]
