"""runiq-postgresql: a durable runiq vector store on PostgreSQL (pgvector HNSW, BM25 lexical search).

Select it per index::

    from runiq_postgresql import PostgreSqlVectorStore

    index.use_vector_store(PostgreSqlVectorStore(dsn="postgresql://..."))   # or dsn=None: embedded server
"""

from __future__ import annotations

from runiq_postgresql.errors import ExtensionMissingError
from runiq_postgresql.health import ReplicaHealth, ReplicaReason
from runiq_postgresql.plugin import open_postgresql_store
from runiq_postgresql.replicas import read_from_primary
from runiq_postgresql.selection import PostgreSqlVectorStore, use_postgresql_vector_store
from runiq_postgresql.settings import PostgresStoreOptions
from runiq_postgresql.store import PostgresVectorStore, StoreState

__all__ = [
    "ExtensionMissingError",
    "PostgreSqlVectorStore",
    "PostgresStoreOptions",
    "PostgresVectorStore",
    "ReplicaHealth",
    "ReplicaReason",
    "StoreState",
    "open_postgresql_store",
    "read_from_primary",
    "use_postgresql_vector_store",
]
