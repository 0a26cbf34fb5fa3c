"""The pluggy entry point (group ``runiq``, name ``postgresql``): registers the vector store factory.

Registration does no I/O: the factory runs when the host first needs an index on this store, and
the store it yields is closed when the host stops. Nor does it import the store (asyncpg, numpy and
the query modules): the factory does, off the event loop, so ``runiq status`` does not pay for them.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from runiq.rag.providers import ProviderRegistry, hookimpl
from runiq_postgresql.selection import PROVIDER_NAME
from runiq_postgresql.settings import PostgresStoreOptions

if TYPE_CHECKING:
    from runiq_postgresql.store import PostgresVectorStore

__all__ = ["open_postgresql_store", "runiq_register_providers"]


@asynccontextmanager
async def open_postgresql_store(options: PostgresStoreOptions) -> AsyncIterator[PostgresVectorStore]:
    """Open a store (pool, migrations, embedded server when there is no DSN) and close it on exit."""
    await asyncio.to_thread(importlib.import_module, "runiq_postgresql.store")  # once per process
    from runiq_postgresql.store import PostgresVectorStore

    async with PostgresVectorStore(options) as store:
        yield store


@hookimpl
def runiq_register_providers(registry: ProviderRegistry) -> None:
    registry.add_vector_store(PROVIDER_NAME, open_postgresql_store, options=PostgresStoreOptions)
