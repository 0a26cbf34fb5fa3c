"""InMemoryVectorStore's worker threads (``run_to_completion``): a cancelled caller keeps the index's
lock until its thread returns, so a search never runs beside a write and a write is never half seen."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from runiq.rag._lexical.engine import BM25Index
from runiq.rag._stores import memory
from runiq.rag.providers import IndexSpec, InMemoryVectorStore, RagChunk, StoredDocument, StoreHit, parse_lexical_query
from runiq.rag.testing import make_chunks

TEXTS = {"a": "alpha beta", "b": "beta gamma", "c": "gamma delta"}
_Call = Callable[[InMemoryVectorStore], Awaitable[object]]


class _Gate:
    """Holds the wrapped function in its worker thread until released."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def hold(self, func: Callable[..., Any]) -> Callable[..., Any]:
        def held(*args: Any, **kwargs: Any) -> Any:
            self.entered.set()
            assert self.release.wait(timeout=30)
            return func(*args, **kwargs)

        return held

    async def wait_entered(self) -> None:
        assert await asyncio.to_thread(self.entered.wait, 30)

    async def assert_holds_back(self, waiting: asyncio.Task[Any]) -> None:
        """``waiting`` does not finish while the gate is shut; then the gate opens."""
        try:
            for _ in range(20):
                await asyncio.sleep(0.01)
            assert not waiting.done()
        finally:
            self.release.set()


def _with_team(chunks: list[RagChunk]) -> list[RagChunk]:
    return [replace(chunk, metadata={"team": "x"}) for chunk in chunks]


async def _store() -> InMemoryVectorStore:
    store = InMemoryVectorStore()
    await store.ensure_index(IndexSpec(name="ix", dimensions=2, embedding_model="m"))
    for n, (doc_id, text) in enumerate(TEXTS.items()):
        vector = np.asarray([[1.0, float(n)]], dtype=np.float32)
        await store.replace_document(
            "ix", StoredDocument(document_id=doc_id, content_hash="h"), _with_team(make_chunks(doc_id, [text])), vector
        )
    return store


async def _replace_a(store: InMemoryVectorStore, text: str) -> None:
    vector = np.asarray([[0.0, 1.0]], dtype=np.float32)
    await store.replace_document(
        "ix", StoredDocument(document_id="a", content_hash="h2"), make_chunks("a", [text]), vector
    )


def _vector_search(store: InMemoryVectorStore) -> Awaitable[list[StoreHit]]:
    return store.search("ix", np.ones(2, dtype=np.float32), top_k=5)


def _filtered_search(store: InMemoryVectorStore) -> Awaitable[list[StoreHit]]:
    return store.search("ix", np.ones(2, dtype=np.float32), top_k=5, filters={"team": "x"})


def _lexical_search(store: InMemoryVectorStore) -> Awaitable[list[StoreHit]]:
    return store.lexical_search("ix", parse_lexical_query("beta"), top_k=5)


@pytest.mark.parametrize(
    ("owner", "attribute", "search"),
    [
        (InMemoryVectorStore, "_search_sync", _vector_search),  # the matrix product
        (InMemoryVectorStore, "_filter_rows", _filtered_search),  # the filter scan before it
        (BM25Index, "top", _lexical_search),  # BM25 scoring
    ],
)
async def test_a_cancelled_search_keeps_writers_out_until_its_thread_ends(
    monkeypatch: pytest.MonkeyPatch, owner: type, attribute: str, search: _Call
) -> None:
    """Cancelling a search does not stop its worker thread, so the read lock stays held until the thread
    returns: a replace issued meanwhile waits instead of changing rows under the running scan."""
    monkeypatch.setattr(memory, "_INLINE_ROWS", 0)
    store = await _store()
    gate = _Gate()
    original = owner.__dict__[attribute]
    held = staticmethod(gate.hold(original.__func__)) if isinstance(original, staticmethod) else gate.hold(original)
    monkeypatch.setattr(owner, attribute, held)
    searching = asyncio.create_task(search(store))
    await gate.wait_entered()
    searching.cancel()
    writing = asyncio.create_task(_replace_a(store, "zeta"))
    await gate.assert_holds_back(writing)
    await asyncio.wait_for(writing, timeout=30)
    with pytest.raises(asyncio.CancelledError):
        await searching
    hits = await store.lexical_search("ix", parse_lexical_query("zeta"), top_k=5)
    assert [h.document_id for h in hits] == ["a"]


async def test_a_cancelled_large_write_keeps_searches_out_and_lands_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A write tokenised in a worker thread holds the write lock until the thread ends, even when its
    caller is cancelled: a search issued meanwhile waits, then sees the whole new version."""
    monkeypatch.setattr(memory, "_THREAD_WRITE_CHARACTERS", 0)
    store = await _store()
    gate = _Gate()
    monkeypatch.setattr(InMemoryVectorStore, "_remove_document", gate.hold(InMemoryVectorStore._remove_document))
    writing = asyncio.create_task(_replace_a(store, "zeta"))
    await gate.wait_entered()
    writing.cancel()
    searching = asyncio.create_task(store.lexical_search("ix", parse_lexical_query("zeta alpha"), top_k=5))
    await gate.assert_holds_back(searching)
    with pytest.raises(asyncio.CancelledError):
        await writing
    hits = await asyncio.wait_for(searching, timeout=30)
    assert [(h.document_id, h.content) for h in hits] == [("a", "zeta")]
    assert await store.count("ix") == 3
