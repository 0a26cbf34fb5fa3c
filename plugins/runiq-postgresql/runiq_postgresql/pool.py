"""One asyncpg pool per DSN (per event loop), shared by every store on that DSN and reference counted.

Stores on the same server but in different schemas share the pool: tables are always qualified
with the store's schema, so connections carry no per-schema state. The first store to open a DSN
decides the pool's size and timeouts.
"""

from __future__ import annotations

import asyncio
import struct
import weakref
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import numpy as np

from runiq_postgresql.schema import ExtensionSchemas
from runiq_postgresql.settings import DEFAULT_HNSW_EF_SEARCH

__all__ = ["PoolSettings", "acquire_pool", "encode_tsvector", "encode_vector", "release_pool"]


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


SESSION_EF_SEARCH = DEFAULT_HNSW_EF_SEARCH


async def _reset(conn: asyncpg.Connection) -> None:
    """Returning a connection to the pool costs no round trip unless a transaction is left open.

    asyncpg's default reset sends ``pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL`` on
    every release, a full round trip per query. The store keeps no session state: settings are
    ``SET LOCAL``, there are no cursors or listeners, and the one session-level advisory lock (the
    ingestion lease) is unlocked explicitly, its connection terminated if the unlock cannot finish.
    """
    if conn.is_in_transaction():
        await conn.execute("ROLLBACK")


async def acquire_pool(dsn: str, extensions: ExtensionSchemas, settings: PoolSettings) -> asyncpg.Pool:
    entry = _for_loop()
    async with entry.lock:
        shared = entry.pools.get(dsn)
        if shared is None:
            vector_schema = extensions.vector

            async def init(conn: asyncpg.Connection) -> None:
                await conn.set_type_codec(
                    "vector", schema=vector_schema, encoder=encode_vector, decoder=decode_vector, format="binary"
                )
                # Chunk rows carry tsvectors built in Python: binary COPY sends them as they are.
                await conn.set_type_codec(
                    "tsvector", schema="pg_catalog", encoder=encode_tsvector, decoder=decode_tsvector, format="binary"
                )

            pool = await asyncpg.create_pool(
                dsn,
                min_size=settings.min_size,
                max_size=settings.max_size,
                timeout=settings.connect_timeout,
                command_timeout=settings.command_timeout,
                init=init,
                reset=_reset,
                server_settings={
                    "search_path": extensions.search_path,
                    "application_name": "runiq",
                    # The store's default floor (pgvector's own is 40), so top_k <= 40 needs no SET LOCAL.
                    "hnsw.ef_search": str(SESSION_EF_SEARCH),
                },
            )
            shared = _Shared(pool=pool, users=0)
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
