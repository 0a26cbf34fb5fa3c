"""The write path: all-or-nothing under cancellation and bad input, id order, helper kept or replaced."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from runiq.errors import VectorDimensionMismatchError
from runiq.rag.providers import IndexSpec, StoredDocument, parse_lexical_query
from runiq.rag.testing import make_chunks
from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore, bulk
from runiq_postgresql.tokenising import TokenisingWorker

CHUNKS = 6000  # one chunk per document: tokenised by the helper process


def _items(count: int, *, prefix: str = "doc", reverse: bool = False) -> list[tuple[StoredDocument, list, np.ndarray]]:
    numbers = range(count - 1, -1, -1) if reverse else range(count)
    items = []
    for n in numbers:
        doc_id = f"{prefix}-{n:05d}"
        text = f"chunk {n} of {prefix} remote work policy ID-{n:05d}"
        document = StoredDocument(document_id=doc_id, content_hash="h")
        items.append((document, make_chunks(doc_id, [text]), np.ones((1, 3))))
    return items


@pytest.fixture
async def store(options: PostgresStoreOptions) -> PostgresVectorStore:
    async with PostgresVectorStore(options) as opened:
        await opened.ensure_index(IndexSpec(name="bulk", dimensions=3, embedding_model="m"))
        yield opened


async def _stats(store: PostgresVectorStore) -> tuple[int, list]:
    index = await store._require("bulk")
    terms = await store.pool.fetch(index.sql.document_frequencies)
    return await store.count("bulk"), [tuple(row) for row in terms]


@pytest.mark.parametrize("stage", ["tokenising", "copying"])
async def test_cancelling_a_write_commits_nothing_and_the_store_goes_on(
    store: PostgresVectorStore, monkeypatch: pytest.MonkeyPatch, stage: str
) -> None:
    """Cancelled while the helper tokenises (its request is discarded with the child) or while rows are
    copied inside the transaction: no chunk, document or statistic of the batch remains."""
    await store.replace_documents("bulk", _items(50, prefix="kept"))
    before = await _stats(store)
    reached = asyncio.Event()
    if stage == "tokenising":
        original_terms = TokenisingWorker.slice_terms

        async def tokenising(self: TokenisingWorker, contents: list[str]) -> object:
            reached.set()
            return await original_terms(self, contents)

        monkeypatch.setattr(TokenisingWorker, "slice_terms", tokenising)
    else:
        original_copy = bulk.copy_chunks

        async def copying(*args: object) -> None:
            await original_copy(*args)  # type: ignore[arg-type]
            reached.set()
            await asyncio.sleep(30)

        monkeypatch.setattr(bulk, "copy_chunks", copying)
    write = asyncio.ensure_future(store.replace_documents("bulk", _items(CHUNKS)))
    await asyncio.wait_for(reached.wait(), 30)
    write.cancel()
    with pytest.raises(asyncio.CancelledError):
        await write
    monkeypatch.undo()
    assert await _stats(store) == before
    assert set(await store.document_hashes("bulk")) == {f"kept-{n:05d}" for n in range(50)}
    await store.replace_documents("bulk", _items(CHUNKS))  # the next write works (a fresh helper if needed)
    assert await store.count("bulk") == 50 + CHUNKS


async def test_a_bad_item_rolls_back_the_batch_and_keeps_the_helper(store: PostgresVectorStore) -> None:
    """Validation of the last item fails while the helper tokenises the batch: nothing is written, and the
    helper's reply is awaited rather than the child killed."""
    before = await _stats(store)
    items = _items(CHUNKS)
    doc, chunks, _ = items[-1]
    items[-1] = (doc, chunks, np.ones((1, 4)))  # wrong dimension, in the last item
    with pytest.raises(VectorDimensionMismatchError):
        await store.replace_documents("bulk", items)
    assert await _stats(store) == before
    worker = store._worker
    assert worker is not None
    first = worker._process
    assert first is not None
    assert first.returncode is None  # an ordinary error waits for the helper's reply instead of killing it
    await store.replace_documents("bulk", _items(CHUNKS))
    assert worker._process is first
    assert await store.count("bulk") == CHUNKS


async def test_items_in_any_order_give_the_same_index(store: PostgresVectorStore) -> None:
    """Items are written in document-id order (one lock order for concurrent writers) whatever order the caller uses."""
    await store.replace_documents("bulk", _items(CHUNKS, reverse=True))
    query = parse_lexical_query("ID-04321 remote")
    reversed_hits = [(h.key, round(h.raw_score, 9)) for h in await store.lexical_search("bulk", query, top_k=5)]
    reversed_stats = await _stats(store)
    await store.drop_index("bulk")
    await store.ensure_index(IndexSpec(name="bulk", dimensions=3, embedding_model="m"))
    await store.replace_documents("bulk", _items(CHUNKS))
    assert [(h.key, round(h.raw_score, 9)) for h in await store.lexical_search("bulk", query, top_k=5)] == reversed_hits
    assert await _stats(store) == reversed_stats
    assert reversed_hits[0][0].document_id == "doc-04321"
