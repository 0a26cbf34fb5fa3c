"""One asyncpg pool per DSN (per event loop), shared by every store on that DSN and reference counted.

Stores on the same server but in different schemas share the pool: tables are always qualified
with the store's schema, so connections carry no per-schema state. The first store to open a DSN
decides the pool's size, timeouts and statement cache.

Connections carry no session state, so a DSN may point at PgBouncer in transaction mode, where
consecutive transactions of one client connection run on different server connections:

- no startup parameters beyond ``application_name`` (which PgBouncer tracks); ``search_path`` is sent
  only when the extensions' schemas are not already on the server's default search path (see
  :func:`_open_pool`);
- per-search settings (``hnsw.ef_search``, ``hnsw.iterative_scan``) are set by the search statement
  itself, local to its implicit transaction (``queries._hnsw_settings``);
- ``statement_cache_size=0`` turns asyncpg's named prepared statements off (PgBouncer before 1.21,
  or ``max_prepared_statements = 0``): each query is then parsed as the unnamed statement in the
  same protocol exchange as its execution;
- type codecs are registered per client connection (by type OID, the same on every server connection).
"""

from __future__ import annotations

import asyncio
import struct
import weakref
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import numpy as np

from runiq_postgresql.schema import ExtensionSchemas
from runiq_postgresql.settings import DEFAULT_STATEMENT_CACHE_SIZE

__all__ = ["PoolSettings", "acquire_pool", "encode_tsvector", "encode_vector", "release_pool"]

APPLICATION_NAME = "runiq"  # a startup parameter PgBouncer tracks per client


def encode_vector(value: Any) -> bytes:
    """pgvector's binary format: dimension (uint16), unused (uint16), float32 values, all big-endian."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    array = np.asarray(value, dtype=">f4").reshape(-1)
    return struct.pack(">HH", array.shape[0], 0) + array.tobytes()


def encode_tsvector(value: Any) -> bytes:
    """``tsvector`` parameters are wire-format bytes built by :func:`runiq_postgresql.lexical.chunk_terms`."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    raise TypeError("tsvector values are sent in the binary wire format (lexical.chunk_terms)")


def decode_tsvector(data: bytes) -> bytes:
    return bytes(data)


def decode_vector(data: bytes) -> np.ndarray:
    dims = struct.unpack_from(">H", data)[0]
    return np.frombuffer(data, dtype=">f4", count=dims, offset=4).astype(np.float32)


@dataclass(frozen=True, slots=True)
class PoolSettings:
    min_size: int
    max_size: int
    connect_timeout: float
    command_timeout: float | None
    statement_cache_size: int = DEFAULT_STATEMENT_CACHE_SIZE


@dataclass(slots=True)
class _Shared:
    pool: asyncpg.Pool
    users: int


@dataclass(slots=True)
class _LoopPools:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    pools: dict[str, _Shared] = field(default_factory=dict)


# Pools belong to the loop that created them; a loop that goes away takes its entry with it.
_loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopPools] = weakref.WeakKeyDictionary()


def _for_loop() -> _LoopPools:
    loop = asyncio.get_running_loop()
    entry = _loops.get(loop)
    if entry is None:
        entry = _loops[loop] = _LoopPools()
    return entry


async def _reset(conn: asyncpg.Connection) -> None:
    """Returning a connection to the pool costs no round trip unless a transaction is left open.

    asyncpg's default reset sends ``pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL`` on
    every release, a full round trip per query. The store keeps no session state: settings are local
    to a transaction, there are no cursors or listeners, and the ingestion lease is a
    transaction-scoped advisory lock (``lease``), released with its transaction.
    """
    if conn.is_in_transaction():
        await conn.execute("ROLLBACK")


def _codec_init(extensions: ExtensionSchemas) -> Callable[[asyncpg.Connection], Coroutine[Any, Any, None]]:
    vector_schema = extensions.vector

    async def init(conn: asyncpg.Connection) -> None:
        await conn.set_type_codec(
            "vector", schema=vector_schema, encoder=encode_vector, decoder=decode_vector, format="binary"
        )
        # Chunk rows carry tsvectors built in Python: binary COPY sends them as they are.
        await conn.set_type_codec(
            "tsvector", schema="pg_catalog", encoder=encode_tsvector, decoder=decode_tsvector, format="binary"
        )

    return init


async def _create_pool(
    dsn: str, extensions: ExtensionSchemas, settings: PoolSettings, server_settings: dict[str, str]
) -> asyncpg.Pool:
    return await asyncpg.create_pool(
        dsn,
        min_size=settings.min_size,
        max_size=settings.max_size,
        timeout=settings.connect_timeout,
        command_timeout=settings.command_timeout,
        statement_cache_size=settings.statement_cache_size,
        init=_codec_init(extensions),
        reset=_reset,
        server_settings=server_settings,
    )


async def _extensions_on_search_path(pool: asyncpg.Pool, extensions: ExtensionSchemas) -> bool:
    async with pool.acquire() as conn:
        visible = await conn.fetchval("SELECT current_schemas(false)::text[]")
    return {extensions.vector, extensions.trgm} <= set(visible or ())


async def _open_pool(dsn: str, extensions: ExtensionSchemas, settings: PoolSettings) -> asyncpg.Pool:
    """A pool whose connections see the extensions' types, operators and functions.

    Normally (the extensions in ``public``, or in a schema the role's or database's ``search_path``
    names) no ``search_path`` is sent. Otherwise the connections get it as a startup parameter,
    which a direct connection accepts and a transaction-mode PgBouncer refuses (there, set it with
    ``ALTER ROLE ... SET search_path``).
    """
    plain = {"application_name": APPLICATION_NAME}
    pool = await _create_pool(dsn, extensions, settings, plain)
    try:
        if await _extensions_on_search_path(pool, extensions):
            return pool
    except BaseException:
        pool.terminate()
        raise
    await pool.close()
    return await _create_pool(dsn, extensions, settings, {**plain, "search_path": extensions.search_path})


async def acquire_pool(dsn: str, extensions: ExtensionSchemas, settings: PoolSettings) -> asyncpg.Pool:
    entry = _for_loop()
    async with entry.lock:
        shared = entry.pools.get(dsn)
        if shared is None:
            shared = _Shared(pool=await _open_pool(dsn, extensions, settings), users=0)
            entry.pools[dsn] = shared
        shared.users += 1
        return shared.pool


async def release_pool(pool: asyncpg.Pool) -> None:
    entry = _for_loop()
    async with entry.lock:
        for dsn, shared in list(entry.pools.items()):
            if shared.pool is pool:
                shared.users -= 1
                if shared.users <= 0:
                    del entry.pools[dsn]
                    try:
                        await asyncio.wait_for(pool.close(), timeout=10)
                    except asyncio.CancelledError:
                        pool.terminate()
                        raise
                    except Exception:  # a dead server: drop the sockets instead
                        pool.terminate()
                return
