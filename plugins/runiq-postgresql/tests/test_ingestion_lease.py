"""Advisory-lock leases coordinate scheduled ingestion across processes (here: two independent pools)."""

from __future__ import annotations

from runiq.rag._stores.base import IngestionCoordinator
from runiq_postgresql.settings import PostgresStoreOptions
from runiq_postgresql.store import PostgresVectorStore


async def test_one_holder_per_index_and_release_on_exit(options: PostgresStoreOptions) -> None:
    """While one store holds an index's lease another gets False; other indexes are independent."""
    first, second = PostgresVectorStore(options), PostgresVectorStore(options)
    await first.open()
    await second.open()
    try:
        assert isinstance(first, IngestionCoordinator)
        async with first.ingestion_lease("docs") as held:
            assert held is True
            async with second.ingestion_lease("docs") as other:
                assert other is False
            async with second.ingestion_lease("other-index") as independent:
                assert independent is True
        async with second.ingestion_lease("docs") as after:
            assert after is True
    finally:
        await first.close()
        await second.close()
