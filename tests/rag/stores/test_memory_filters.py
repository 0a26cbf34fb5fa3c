"""The in-memory store's filter index answers exactly what the reference evaluation does."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runiq.rag._documents import RagChunk, chunk_id_for
from runiq.rag._stores.base import IndexSpec, StoredDocument
from runiq.rag._stores.filters import matches, parse_filter
from runiq.rag.providers import InMemoryVectorStore
from runiq.rag.testing.filter_strategies import filters, metadata_rows

_QUERY = np.array([1, 0, 0], dtype=np.float32)


async def _store(documents: dict[str, list[dict[str, Any]]]) -> InMemoryVectorStore:
    store = InMemoryVectorStore()
    await store.ensure_index(IndexSpec(name="ix", dimensions=3, embedding_model="m"))
    for doc_id, rows in documents.items():
        await _write(store, doc_id, rows)
    return store


async def _write(store: InMemoryVectorStore, doc_id: str, rows: list[dict[str, Any]]) -> None:
    chunks = [
        RagChunk(document_id=doc_id, chunk_id=chunk_id_for(doc_id, i), ordinal=i, content="x", start=0, end=1,
                 metadata=metadata)
        for i, metadata in enumerate(rows)
    ]  # fmt: skip
    vectors = np.tile(_QUERY, (len(rows), 1))
    await store.replace_document("ix", StoredDocument(document_id=doc_id, content_hash="h"), chunks, vectors)


def _expected(documents: dict[str, list[dict[str, Any]]], spec: dict[str, Any]) -> list[str]:
    node = parse_filter(spec)
    assert node is not None
    return sorted(
        chunk_id_for(doc_id, i)
        for doc_id, rows in documents.items()
        for i, row in enumerate(rows)
        if matches(node, row)
    )


async def _found(store: InMemoryVectorStore, spec: dict[str, Any]) -> list[str]:
    return sorted(hit.chunk_id for hit in await store.search("ix", _QUERY, top_k=1000, filters=spec))


_DOCUMENTS = st.dictionaries(st.sampled_from(["p", "q", "r"]), st.lists(metadata_rows(), max_size=5), max_size=3)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents=_DOCUMENTS, specs=st.lists(filters(), min_size=1, max_size=4))
async def test_the_index_agrees_with_the_reference(
    documents: dict[str, list[dict[str, Any]]], specs: list[dict[str, Any]]
) -> None:
    """Postings, key sets, set algebra and row-by-row tests give the reference's rows, for any filter."""
    store = await _store(documents)
    for spec in specs:
        assert await _found(store, spec) == _expected(documents, spec), spec


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    documents=_DOCUMENTS,
    replacement=st.tuples(st.sampled_from(["p", "q", "r"]), st.lists(metadata_rows(), max_size=4)),
    deleted=st.sampled_from(["p", "q", "r"]),
    spec=filters(),
)
async def test_the_index_forgets_replaced_and_deleted_rows(
    documents: dict[str, list[dict[str, Any]]],
    replacement: tuple[str, list[dict[str, Any]]],
    deleted: str,
    spec: dict[str, Any],
) -> None:
    """After a replace (reusing holes) and a delete, filters see only what is stored (the sorted
    orders built by the first query are rebuilt)."""
    store = await _store(documents)
    assert await _found(store, spec) == _expected(documents, spec)
    doc_id, rows = replacement
    await _write(store, doc_id, rows)
    await store.delete_documents("ix", [deleted])
    current = {**documents, doc_id: rows}
    current.pop(deleted, None)
    assert await _found(store, spec) == _expected(current, spec)


async def test_removed_values_leave_no_empty_postings() -> None:
    """Unique values written and deleted do not accumulate in the index."""
    store = await _store({})
    for n in range(50):
        await _write(store, "d", [{"id": n, "tags": (f"t{n}", n)}])
    index = store._indexes["ix"].by_metadata
    assert len(index._postings) == 3 and len(index._keys) == 2  # id, and the two elements of tags
    await store.delete_documents("ix", ["d"])
    assert index._postings == {} and index._keys == {}


async def test_range_orders_are_kept_per_stored_key_and_dropped_on_writes() -> None:
    """A range builds a sorted order once; a write to its key drops it; absent keys are never cached."""
    store = await _store({"d": [{"n": 1}, {"n": 5}]})
    index = store._indexes["ix"].by_metadata
    assert await _found(store, {"n": {"$gt": 2}}) == ["d#1"]
    assert list(index._orders) == ["n"]
    for i in range(1_000):
        assert await _found(store, {f"absent{i}": {"$gt": 2}}) == []
    assert list(index._orders) == ["n"]
    await _write(store, "e", [{"n": 9}])
    assert index._orders == {}
    assert await _found(store, {"n": {"$gt": 2}}) == ["d#1", "e#0"]
    await store.delete_documents("ix", ["e"])
    assert await _found(store, {"n": {"$gt": 2}}) == ["d#1"]


async def test_a_large_range_filter_runs_off_the_event_loop() -> None:
    """Above the inline threshold the row-by-row work happens in a worker thread: the loop keeps ticking."""
    rows = [{"n": i, "s": f"v{i % 97}"} for i in range(20_000)]
    store = await _store({"d": rows})
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    started = time.perf_counter()
    spec = {"$not": {"n": {"$lt": 19_990}}, "s": {"$gte": "v5"}}
    found = await _found(store, spec)
    elapsed = time.perf_counter() - started
    stop.set()
    await task
    assert found == _expected({"d": rows}, spec)
    assert ticks > 10, (ticks, elapsed)
