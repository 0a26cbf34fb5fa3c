"""The store's health probe: can it connect, are its extensions there, is its schema the one this code writes.

One short statement on a pooled connection, bounded by ``HEALTH_TIMEOUT_SECONDS``. It never raises: a
failure is a :class:`StoreHealth` with a fixed reason code, never the server's message (which can echo
DSNs or identifiers).
"""

from __future__ import annotations

import asyncio

import asyncpg

from runiq.rag.stores import StoreHealth
from runiq_postgresql.schema import LATEST_VERSION, quote_ident

__all__ = ["HEALTH_TIMEOUT_SECONDS", "probe"]

HEALTH_TIMEOUT_SECONDS = 5.0
_REQUIRED_EXTENSIONS = ("vector", "pg_trgm")


def _statement(schema: str) -> str:
    return (
        "SELECT (SELECT count(*) FROM pg_extension WHERE extname = ANY($1::text[])) AS extensions, "
        f"(SELECT coalesce(max(version), 0) FROM {quote_ident(schema)}.schema_version) AS version"
    )


async def probe(pool: asyncpg.Pool | None, schema: str) -> StoreHealth:
    """Health of an open store's pool (``None``: the store is not open)."""
    if pool is None:
        return StoreHealth(healthy=False, reason="not_open")
    try:
        async with asyncio.timeout(HEALTH_TIMEOUT_SECONDS), pool.acquire() as conn:
            row = await conn.fetchrow(_statement(schema), list(_REQUIRED_EXTENSIONS))
    except (asyncpg.UndefinedTableError, asyncpg.InvalidSchemaNameError):
        return StoreHealth(healthy=False, reason="schema_missing")
    except (TimeoutError, OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
        return StoreHealth(healthy=False, reason="unreachable")
    if row is None or int(row["extensions"]) < len(_REQUIRED_EXTENSIONS):
        return StoreHealth(healthy=False, reason="extension_missing")
    version = int(row["version"])
    if version < LATEST_VERSION:
        return StoreHealth(healthy=False, reason="schema_outdated")
    if version > LATEST_VERSION:
        return StoreHealth(healthy=False, reason="schema_newer")
    return StoreHealth(healthy=True)
