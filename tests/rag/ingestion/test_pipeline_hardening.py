"""Ingestion keeps the event loop free and fails one document at a time."""

from __future__ import annotations

import asyncio
import random
import string
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from structlog.testing import capture_logs

from runiq.hosting import Host
from runiq.rag import (
    EmbeddingInputKind,
    HashingEmbedder,
    InMemoryVectorStore,
    RagChunk,
    RagDocument,
    RagIngestionManager,
    RagIngestionState,
    StoredDocument,
)
from runiq.rag.embeddings.base import FloatMatrix
from runiq.rag.ingestion.pipeline import safe_id

S = RagIngestionState
DIMS = 16
# semantic-text-splitter 0.33 panics on this Markdown with 20-character chunks and 10 of overlap.
PANICKING_MARKDOWN = "         。 \n\n\n\t#👩\u200d💻éa"


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


async def test_ingesting_a_2_mb_whitespace_free_document_never_blocks_the_loop(
    index_host: Callable[..., Host], source: Any
) -> None:
    """While the pipeline hashes, chunks and embeds a 2 MB document without whitespace, a 10 ms ticker on
    the loop never lags more than 100 ms (chunking it on the loop blocked everything for 8-48 s)."""
    content = "".join(random.Random(3).choices(string.ascii_letters + string.digits, k=2 << 20))
    source.documents = [RagDocument(document_id="blob", content=content)]
    store = LexiconFreeStore()
    host = index_host(
        lambda index: index.add_source(source).use_embedding("remote").use_vector_store("plain"),
        embeddings={"remote": RemoteLikeEmbedder(DIMS)},
        stores={"plain": store},
    )
    lags: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        loop = asyncio.get_running_loop()
        while not done.is_set():
            before = loop.time()
            await asyncio.sleep(0.01)
            lags.append(loop.time() - before - 0.01)

    async with host:
        ticking = asyncio.create_task(ticker())
        await asyncio.sleep(0.05)
        operation = await host.services.get(RagIngestionManager).run("docs")
        done.set()
        await ticking
    assert operation.state is S.COMPLETED and store.written == {"blob": operation.progress.produced_chunks}
    assert operation.progress.produced_chunks > 2000
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
        assert failed == {safe_id("b-surrogate"): "invalid_text", safe_id("c-panic"): "chunking_failed"}
        assert sorted(await stored_chunks(memory_store, "docs", DIMS)) == ["a-good", "d-good"]
        assert "Broken" not in repr(logs)
