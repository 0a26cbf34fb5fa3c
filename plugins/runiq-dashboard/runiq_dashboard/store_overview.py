"""An index's store as the page shows it: health, chunks and documents.

Chunks are the store's ``count``; documents its ``document_count`` (:class:`DocumentCounter`), exact.
A store without that capability is counted by paging through ``document_id_page`` (10,000 ids a page,
the way ingestion finds deleted documents) up to :data:`DOCUMENT_COUNT_CAP`: past it the count is
reported as not exact ("100,000+"), so a large index costs at most ten short queries. An unhealthy
store is not asked; a store that fails or takes longer than :data:`STORE_READ_TIMEOUT_SECONDS` to
answer leaves the counts unknown (``null``).
"""

from __future__ import annotations

import asyncio

from runiq.errors import RagError
from runiq.logging import get_logger
from runiq.rag import IndexRuntime, RagIngestionManager
from runiq.rag.providers import DocumentCounter, VectorStore
from runiq_dashboard import projection
from runiq_dashboard.dto import RagStoreDto

__all__ = ["DOCUMENT_COUNT_CAP", "STORE_READ_TIMEOUT_SECONDS", "store_overview"]

log = get_logger(__name__)

DOCUMENT_COUNT_CAP = 100_000
STORE_READ_TIMEOUT_SECONDS = 10.0
_ID_PAGE = 10_000


async def store_overview(runtime: IndexRuntime, manager: RagIngestionManager, index_name: str) -> RagStoreDto:
    health = await manager.health(index_name)
    if not health.healthy:
        return projection.store(health, None, None, exact=False)
    try:
        async with asyncio.timeout(STORE_READ_TIMEOUT_SECONDS):
            store = (await runtime.get(index_name)).store
            chunks = await store.count(index_name)
            documents, exact = await count_documents(store, index_name)
    except (RagError, RuntimeError, TimeoutError) as exc:  # RuntimeError: the host is stopping
        log.info("dashboard.store_counts_unavailable", index=index_name, error=type(exc).__name__)
        return projection.store(health, None, None, exact=False)
    return projection.store(health, chunks, documents, exact=exact)


async def count_documents(store: VectorStore, index_name: str, cap: int = DOCUMENT_COUNT_CAP) -> tuple[int, bool]:
    """``(count, exact)``: the stored documents, or ``(cap, False)`` when a store that cannot count
    them holds more than ``cap``."""
    if isinstance(store, DocumentCounter):
        return await store.document_count(index_name), True
    return await _paged_document_count(store, index_name, cap)


async def _paged_document_count(store: VectorStore, index_name: str, cap: int) -> tuple[int, bool]:
    counted = 0
    after: str | None = None
    while True:
        limit = min(_ID_PAGE, cap + 1 - counted)
        page = await store.document_id_page(index_name, after=after, limit=limit)
        counted += len(page)
        if len(page) < limit or counted > cap:
            break
        after = page[-1]
    return (cap, False) if counted > cap else (counted, True)
