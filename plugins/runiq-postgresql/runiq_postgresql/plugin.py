"""The pluggy entry point (group ``runiq``, name ``postgresql``): registers the vector store factory.

Registration does no I/O: the factory runs when the host first needs an index on this store, and
the store it yields is closed when the host stops.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from runiq.rag.providers import ProviderRegistry, hookimpl
from runiq_postgresql.selection import PROVIDER_NAME
from runiq_postgresql.settings import PostgresStoreOptions
from runiq_postgresql.store import PostgresVectorStore

__all__ = ["open_postgresql_store", "runiq_register_providers"]


@asynccontextmanager
async def open_postgresql_store(options: PostgresStoreOptions) -> AsyncIterator[PostgresVectorStore]:
    """Open a store (pool, migrations, embedded server when there is no DSN) and close it on exit."""
    async with PostgresVectorStore(options) as store:
        yield store


@hookimpl
def runiq_register_providers(registry: ProviderRegistry) -> None:
    registry.add_vector_store(PROVIDER_NAME, open_postgresql_store, options=PostgresStoreOptions)
