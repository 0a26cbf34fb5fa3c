"""Ingestion keeps the event loop free, fails one document at a time, and bounds what a hanging
embedding provider costs a run or a query."""

from __future__ import annotations

import asyncio
import random
import string
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import numpy as np
import pytest
from structlog.testing import capture_logs

from runiq.errors import ProviderTimeoutError
from runiq.hosting import Host
from runiq.rag import (
    RagDocument,
    RagIngestionManager,
    RagIngestionState,
    RagQuery,
    RagRetriever,
    RetrievalError,
    RetrievalErrorCode,
)
from runiq.rag._embeddings.base import FloatMatrix
from runiq.rag._runtime import IndexRuntime
from runiq.rag.providers import (
    EmbeddingInputKind,
    HashingEmbedder,
    InMemoryVectorStore,
    RagChunk,
    SourceFailure,
    StoredDocument,
    identity_hash,
)

T = TypeVar("T")

S = RagIngestionState
DIMS = 16
TIMEOUT = 0.25
# semantic-text-splitter 0.33 panics on this Markdown with 20-character chunks and 10 of overlap.
PANICKING_MARKDOWN = "         。 \n\n\n\t#👩\u200d💻éa"


class HangingEmbedder(HashingEmbedder):
    """Never answers calls whose texts contain ``hang_on`` (every call when None); fails fast on ``fail_on``."""

    def __init__(self, *, hang_on: str | None = None, fail_on: str | None = None, queries_only: bool = False) -> None:
        super().__init__(DIMS)
        self.hang_on = hang_on
        self.fail_on = fail_on
        self.queries_only = queries_only
        self.calls = 0

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
        self.calls += 1
        if self.fail_on is not None and any(self.fail_on in text for text in texts):
            raise RuntimeError("provider echoed input: " + " | ".join(texts))
        hangs = self.hang_on is None or any(self.hang_on in text for text in texts)
        if hangs and (kind is EmbeddingInputKind.QUERY or not self.queries_only):
            await asyncio.Event().wait()
        return self.embed_sync(texts)


def _index(source: Any, embedder: str = "hanging", **batching: Any) -> Callable[[Any], object]:
    def configure(index: Any) -> object:
        index.add_source(source).use_embedding(embedder).use_in_memory_vector_store()
        return index.configure_embedding_batching(**{"timeout_seconds": TIMEOUT, **batching})

    return configure


async def _timed_run(host: Host) -> tuple[Any, float]:
    started = time.perf_counter()
    operation = await asyncio.wait_for(host.services.get(RagIngestionManager).run("docs"), 60)
    return operation, time.perf_counter() - started


def _forty(source: Any) -> None:
    source.set(**{f"doc-{n:02d}": f"Document number {n} about remote work." for n in range(40)})


# -- nothing CPU-heavy on the loop -------------------------------------------------------------


class LexiconFreeStore(InMemoryVectorStore):
    """Keeps only what each write carried. The in-memory store's lexical index tokenises on the loop
    (~1.5 s for these 2,331 chunks): that is the store's share of the rule, not the pipeline's."""

    def __init__(self) -> None:
        super().__init__()
        self.written: dict[str, int] = {}

    async def replace_document(
        self, index_name: str, document: StoredDocument, chunks: Sequence[RagChunk], vectors: Any
    ) -> None:
        assert vectors is not None and len(vectors) == len(chunks)
        self.written[document.document_id] = len(chunks)


class RemoteLikeEmbedder(HashingEmbedder):
    """Answers at once with a fixed vector, as a remote provider costs the process no CPU. (The hashing
    embedder's pure-Python threads contend for the GIL with the loop, which is its own matter.)"""

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
        await asyncio.sleep(0)
        return np.full((len(texts), self.dimensions), 0.125, dtype=np.float32)


async def _with_loop_lags(work: Awaitable[T], *, settle: float = 0.0) -> tuple[T, list[float]]:
    """Await ``work`` while a 10 ms ticker on the loop records the CPU time the loop's thread spent
    between two ticks: what ran on the loop itself. (Wall-clock lateness would also count the time the
    process waited for a core or a worker thread held the GIL, which a loaded machine makes arbitrary.)"""
    lags: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        while not done.is_set():
            before = time.thread_time()
            await asyncio.sleep(0.01)
            lags.append(time.thread_time() - before)

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(settle)
    try:
        result = await work
    finally:
        done.set()
        await ticking
    return result, lags


async def test_ingesting_a_2_mb_whitespace_free_document_never_blocks_the_loop(
    index_host: Callable[..., Host], source: Any
) -> None:
    """While the pipeline hashes, chunks and embeds a 2 MB document without whitespace, the loop's thread
    never spends 100 ms of CPU between two ticks of a 10 ms ticker (chunking it on the loop blocked
    everything for 8-48 s)."""
    content = "".join(random.Random(3).choices(string.ascii_letters + string.digits, k=2 << 20))
    source.documents = [RagDocument(document_id="blob", content=content)]
    store = LexiconFreeStore()
    host = index_host(
        lambda index: index.add_source(source).use_embedding("remote").use_vector_store("plain"),
        embeddings={"remote": RemoteLikeEmbedder(DIMS)},
        stores={"plain": store},
    )
    async with host:
        operation, lags = await _with_loop_lags(host.services.get(RagIngestionManager).run("docs"), settle=0.05)
    assert operation.state is S.COMPLETED and store.written == {"blob": operation.progress.produced_chunks}
    assert operation.progress.produced_chunks > 2000
    assert len(lags) > 5 and max(lags) < 0.1


async def test_the_in_memory_store_indexes_a_large_document_off_the_loop(
    index_host: Callable[..., Host], source: Any, memory_store: InMemoryVectorStore
) -> None:
    """The store's own lexical indexing of 1 MB of varied words runs in a worker thread: on the loop it
    took seconds of the loop thread's CPU between two ticks; off it, the loop's share stays far below."""
    rng = random.Random(5)
    vocabulary = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) + str(i) for i in range(60_000)]
    words = rng.choices(vocabulary, k=150_000)  # many distinct words: the analyzer's word cache cannot hide the cost
    source.documents = [RagDocument(document_id="big", content=" ".join(words))]
    host = index_host(
        lambda index: index.add_source(source).use_embedding("remote").use_vector_store("memory"),
        embeddings={"remote": RemoteLikeEmbedder(DIMS)},
        stores={"memory": memory_store},
    )
    async with host:
        operation, lags = await _with_loop_lags(host.services.get(RagIngestionManager).run("docs"))
    assert operation.state is S.COMPLETED and await memory_store.count("docs") == operation.progress.produced_chunks
    assert len(lags) > 5 and max(lags) < 0.1


# -- per-document failures -----------------------------------------------------------------------


async def test_bad_text_and_a_chunker_failure_fail_only_their_documents(
    index_host: Callable[..., Host], source: Any, memory_store: InMemoryVectorStore, stored_chunks: Any
) -> None:
    """A lone surrogate (invalid_text) and a splitter panic (chunking_failed) each fail one document with a
    content-free code; the good documents are stored (the surrogate used to abort the run, failed=0)."""
    source.documents = [
        RagDocument(document_id="a-good", content="Remote work is allowed."),
        RagDocument(document_id="b-surrogate", content="Broken \udc80 text."),
        RagDocument(document_id="c-panic", content=PANICKING_MARKDOWN, content_type="text/markdown"),
        RagDocument(document_id="d-good", content="Expenses need receipts."),
    ]
    host = index_host(
        lambda index: (
            index.add_source(source)
            .use_embedding("hashing", dimensions=DIMS)
            .use_vector_store("shared")
            .configure_chunking(20, 10)
        ),
        stores={"shared": memory_store},
    )
    async with host:
        with capture_logs() as logs:
            operation = await host.services.get(RagIngestionManager).run("docs")
        assert operation.state is S.PARTIALLY_COMPLETED
        assert (operation.progress.failed_documents, operation.progress.added_documents) == (2, 2)
        failed = {e["document"]: e["code"] for e in logs if e["event"] == "ingestion.document_failed"}
        assert failed == {identity_hash("b-surrogate"): "invalid_text", identity_hash("c-panic"): "chunking_failed"}
        assert sorted(await stored_chunks(memory_store, "docs", DIMS)) == ["a-good", "d-good"]
        assert "Broken" not in repr(logs)


async def test_a_source_failure_and_a_duplicate_id_are_logged_by_hash_like_any_failed_document(
    index_host: Callable[..., Host], source: Any, memory_store: InMemoryVectorStore
) -> None:
    """What a source could not deliver and a repeated id are failed documents too: each is logged as
    ``ingestion.document_failed`` with its code and the id's identity hash, never the id itself."""
    secret_id = "private/salaries-2024.txt"
    source.failures = [SourceFailure(document_id=secret_id, code="undecodable")]
    source.documents = [
        RagDocument(document_id="dup", content="First."),
        RagDocument(document_id="dup", content="Second."),
    ]
    host = index_host(
        lambda index: index.add_source(source).use_embedding("hashing", dimensions=DIMS).use_vector_store("shared"),
        stores={"shared": memory_store},
    )
    async with host:
        with capture_logs() as logs:
            operation = await host.services.get(RagIngestionManager).run("docs")
        failed = {e["document"]: e["code"] for e in logs if e["event"] == "ingestion.document_failed"}
        assert failed == {identity_hash(secret_id): "undecodable", identity_hash("dup"): "duplicate_document_id"}
        assert operation.progress.failed_documents == 2
        assert "salaries" not in repr(logs)


# -- timeouts --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "batching",
    [pytest.param({}, id="one group of forty"), pytest.param({"batch_size": 4, "concurrency": 1}, id="ten groups")],
)
async def test_a_hanging_provider_fails_forty_documents_in_two_timeouts(
    index_host: Callable[..., Host], source: Any, batching: dict[str, int]
) -> None:
    """The group's call and the first isolated document time out; two provider timeouts in a row stop the
    run calling it, so the other documents fail at once (one timeout per document before: 20.8 s for 40
    documents at 0.5 s)."""
    _forty(source)
    hanging = HangingEmbedder()
    async with index_host(_index(source, **batching), embeddings={"hanging": hanging}) as host:
        with capture_logs() as logs:
            operation, elapsed = await _timed_run(host)
    assert operation.state is S.FAILED and operation.progress.failed_documents == 40
    assert operation.last_failure is not None and operation.last_failure.code == "embedding_failed"
    assert hanging.calls == 2 and operation.progress.embedding_calls == 2
    assert [e["error"] for e in logs if e["event"] == "ingestion.embedding_stopped"] == ["ProviderTimeoutError"]
    assert elapsed < 8 * TIMEOUT


async def test_a_document_that_times_out_alone_does_not_fail_the_documents_after_it(
    index_host: Callable[..., Host], source: Any
) -> None:
    """Isolation goes on past one slow document (a success resets the count), so only the failing
    documents fail; the run costs that one timeout, not one per document."""
    source.set(a="Alpha is fine.", b="BROKEN input.", c="SLOW input.", d="Delta is fine.", e="Echo is fine.")
    hanging = HangingEmbedder(hang_on="SLOW", fail_on="BROKEN")
    async with index_host(_index(source), embeddings={"hanging": hanging}) as host:
        operation, elapsed = await _timed_run(host)
    p = operation.progress
    assert (p.added_documents, p.failed_documents) == (3, 2)
    assert hanging.calls == 6  # the group (fails fast on b), then each document on its own
    assert elapsed < 6 * TIMEOUT


async def test_embedding_calls_time_out_after_60_seconds_by_default(
    index_host: Callable[..., Host], source: Any
) -> None:
    """An index that never configures batching still bounds every provider call (it used to wait forever)."""
    source.set(a="Remote work.")
    async with index_host(
        lambda index: index.add_source(source).use_embedding("hashing", dimensions=DIMS).use_in_memory_vector_store()
    ) as host:
        resources = await host.services.get(IndexRuntime).get("docs")
        assert resources.embedder is not None and resources.embedder.timeout_seconds == 60.0


async def test_a_query_with_a_hanging_embedder_fails_with_provider_timeout_within_the_timeout(
    index_host: Callable[..., Host], source: Any
) -> None:
    """Query embedding uses the same per-call timeout: the retrieval fails with embedding_failed, caused
    by ProviderTimeoutError, after about one timeout."""
    source.set(a="Remote work is allowed.")
    hanging = HangingEmbedder(queries_only=True)
    async with index_host(_index(source), embeddings={"hanging": hanging}) as host:
        await host.services.get(RagIngestionManager).run("docs")
        started = time.perf_counter()
        try:
            await host.services.get(RagRetriever).retrieve(RagQuery(index_name="docs", text="remote work"))
        except RetrievalError as error:
            failure: RetrievalError | None = error
        else:
            failure = None
        elapsed = time.perf_counter() - started
    assert failure is not None and failure.code is RetrievalErrorCode.EMBEDDING_FAILED
    assert isinstance(failure.__cause__, ProviderTimeoutError) and failure.cause_type == "ProviderTimeoutError"
    assert elapsed < 6 * TIMEOUT
