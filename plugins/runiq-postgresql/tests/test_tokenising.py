"""The tokenising helper process: same terms as in-process, falls back when absent, dies with the store."""

from __future__ import annotations

import asyncio
import io
import random
from collections import Counter

import numpy as np
import pytest
from structlog.testing import capture_logs

from runiq.rag._lexical.options import LexicalOptions
from runiq.rag.providers import IndexSpec, StoredDocument, parse_lexical_query
from runiq.rag.testing import CANARY, make_chunks
from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore
from runiq_postgresql import tokenising as tokenising_module
from runiq_postgresql.lexical import chunk_terms, slice_terms
from runiq_postgresql.tokenising import TokenisingWorker, WorkerUnavailable, frame
from runiq_postgresql.tokenising_worker import serve

WORDS = ["remote", "work", "policy", "travel", "expenses", "the", "of", "running", "POL-HR-014", "filename.cs"]
QUERIES = ["remote work policy", "POL-HR-014", '"travel expenses"', "filename.cs running", CANARY]


def _texts(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 60))) for _ in range(count)]
    texts[3] = f"contains {CANARY} once"
    return texts


def _items(texts: list[str], per_document: int = 4) -> list[tuple[StoredDocument, list, np.ndarray]]:
    items = []
    for start in range(0, len(texts), per_document):
        doc_id = f"doc-{start // per_document:04d}"
        part = texts[start : start + per_document]
        items.append(
            (
                StoredDocument(document_id=doc_id, content_hash="h"),
                make_chunks(doc_id, part),
                np.ones((len(part), 3), dtype=np.float32),
            )
        )
    return items


@pytest.mark.parametrize("stemmer", ["none", "english"])
async def test_worker_terms_equal_in_process_terms(stemmer: str) -> None:
    lexical = LexicalOptions(stopwords="english", stemmer=stemmer)  # type: ignore[arg-type]
    analyzer = lexical.analyzer()
    texts = [*_texts(300), "", "   ", "ünïcødé CS1503 v1.2.3 snake_case_name", "x" * 30_000]
    worker = TokenisingWorker(lexical)
    try:
        computed = await worker.slice_terms(texts)
        again = await worker.slice_terms(texts[:5])  # the same child answers the next request
    finally:
        await worker.close()
    assert computed == slice_terms(texts, analyzer)
    singles = [chunk_terms(text, analyzer) for text in texts]
    assert computed.tsvectors == [terms.tsvector for terms in singles]
    assert computed.term_counts == [terms.term_count for terms in singles]
    # Document frequencies: each chunk counts each of its lexemes once.
    assert computed.frequencies == Counter(lexeme for terms in singles for lexeme in set(terms.lexemes))
    assert again == slice_terms(texts[:5], analyzer)


def test_worker_reports_an_error_by_type_name_only() -> None:
    """A malformed request gets a str frame naming the exception, with no content, and the child stops."""
    stdout = io.BytesIO()
    payload = frame([f"fine {CANARY}", None])  # None is not a str: tokenising raises
    serve(io.BytesIO(payload + frame(["never read"])), stdout, LexicalOptions())
    reply = stdout.getvalue()
    assert CANARY.encode() not in reply
    assert b"never read" not in reply
    assert b"Error" in reply  # e.g. TypeError / AttributeError, the type name only


async def test_close_stops_the_child_and_cancel_discards_it() -> None:
    worker = TokenisingWorker(LexicalOptions())
    await worker.slice_terms(["warm up"])
    first = worker._process
    assert first is not None
    assert first.returncode is None

    request = asyncio.ensure_future(worker.slice_terms(_texts(10) * 5_000))
    await asyncio.sleep(0.05)
    request.cancel()
    with pytest.raises(asyncio.CancelledError):
        await request
    assert await asyncio.wait_for(first.wait(), 10) is not None  # killed: its late reply cannot be misread

    assert await worker.slice_terms(["after cancel"]) == slice_terms(["after cancel"], LexicalOptions().analyzer())
    second = worker._process
    assert second is not None
    assert second is not first
    await worker.close()
    assert second.returncode == 0  # stdin closed: it exited on its own
    assert worker._process is None


async def test_a_child_that_cannot_start_marks_the_worker_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokenising_module.sys, "executable", "/nonexistent/python-for-runiq")
    worker = TokenisingWorker(LexicalOptions())
    with capture_logs() as logs, pytest.raises(WorkerUnavailable):
        await worker.slice_terms([f"text {CANARY}"])
    assert not worker.available
    with pytest.raises(WorkerUnavailable):  # no retry storm: it stays off
        await worker.slice_terms(["more"])
    warnings = [e for e in logs if e["event"] == "postgresql.tokenising_worker_unavailable"]
    assert len(warnings) == 1
    assert warnings[0]["reason"] == "FileNotFoundError"
    assert CANARY not in repr(logs)


async def _bulk_load_and_search(options: PostgresStoreOptions, texts: list[str]) -> tuple[list, dict]:
    async with PostgresVectorStore(options) as store:
        await store.ensure_index(IndexSpec(name="tok", dimensions=3, embedding_model="m"))
        items = _items(texts)
        async with store.bulk_load("tok"):
            for start in range(0, len(items), 300):  # several batches, each tokenised in one request
                await store.replace_documents("tok", items[start : start + 150])
        results = {}
        for text in QUERIES:
            hits = await store.lexical_search("tok", parse_lexical_query(text), top_k=20)
            results[text] = [(h.key, round(h.raw_score, 9)) for h in hits]
        index = await store._require("tok")
        stats = await store.pool.fetch(index.sql.document_frequencies)
        return results, {"stats": [tuple(r) for r in stats], "worker": store._worker}


async def test_bulk_loads_through_the_process_and_the_thread_agree(postgres_dsn: str, schema: str) -> None:
    texts = _texts(2400)
    in_process = PostgresStoreOptions(dsn=postgres_dsn, schema=schema + "_t", tokenising_process=False)
    helper = PostgresStoreOptions(dsn=postgres_dsn, schema=schema, tokenising_process=True)
    try:
        with capture_logs() as logs:
            by_process, process_state = await _bulk_load_and_search(helper, texts)
        by_thread, thread_state = await _bulk_load_and_search(in_process, texts)
    finally:
        await _drop(postgres_dsn, schema + "_t")
    assert by_process == by_thread
    assert any(hits for hits in by_process.values())
    assert process_state["stats"] == thread_state["stats"]
    assert thread_state["worker"] is None
    assert any(e["event"] == "postgresql.tokenising_worker_started" for e in logs)
    assert not any(e["event"] == "postgresql.tokenising_worker_unavailable" for e in logs)
    assert process_state["worker"]._process is None  # closed with the store


async def test_bulk_load_falls_back_to_a_thread_without_leaking_content(
    options: PostgresStoreOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tokenising_module.sys, "executable", "/nonexistent/python-for-runiq")
    texts = _texts(1200)
    with capture_logs() as logs:
        results, _ = await _bulk_load_and_search(options, texts)
    assert results[CANARY]
    assert results[CANARY][0][0].document_id == "doc-0000"
    warnings = [e for e in logs if e["event"] == "postgresql.tokenising_worker_unavailable"]
    assert len(warnings) == 1
    assert CANARY not in repr(logs)


async def _drop(dsn: str, schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()
