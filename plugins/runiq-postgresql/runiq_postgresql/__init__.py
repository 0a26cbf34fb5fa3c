"""runiq-postgresql: a durable runiq vector store on PostgreSQL (pgvector HNSW, BM25 lexical search).

Select it per index::

    from runiq_postgresql import PostgresVectorStorage

    index.use_vector_store(PostgresVectorStorage(dsn="postgresql://..."))   # or dsn=None: embedded server
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from runiq_postgresql.selection import PostgresVectorStorage, use_postgresql_vector_store
from runiq_postgresql.settings import PostgresStoreOptions

if TYPE_CHECKING:
    from runiq_postgresql.errors import ExtensionMissingError
    from runiq_postgresql.health import ReplicaHealth, ReplicaReason
    from runiq_postgresql.plugin import open_postgresql_store
    from runiq_postgresql.replicas import read_from_primary
    from runiq_postgresql.store import PostgresVectorStore, StoreState

__all__ = [
    "ExtensionMissingError",
    "PostgresStoreOptions",
    "PostgresVectorStorage",
    "PostgresVectorStore",
    "ReplicaHealth",
    "ReplicaReason",
    "StoreState",
    "open_postgresql_store",
    "read_from_primary",
    "use_postgresql_vector_store",
]

# Loaded on first use (PEP 562): these modules import asyncpg and the store, which loading the plugin
# (``runiq_postgresql.plugin``, this package's entry point) and selecting the store do not need.
_LAZY = {
    "ExtensionMissingError": "runiq_postgresql.errors",
    "ReplicaHealth": "runiq_postgresql.health",
    "ReplicaReason": "runiq_postgresql.health",
    "open_postgresql_store": "runiq_postgresql.plugin",
    "read_from_primary": "runiq_postgresql.replicas",
    "PostgresVectorStore": "runiq_postgresql.store",
    "StoreState": "runiq_postgresql.store",
}

if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any attribute

    def __getattr__(name: str) -> object:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # later lookups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(__all__))
