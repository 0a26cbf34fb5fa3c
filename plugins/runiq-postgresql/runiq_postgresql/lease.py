"""The ingestion lease: a transaction-scoped advisory lock, held by one open transaction for a whole run.

A session-level lock (``pg_try_advisory_lock``) would belong to whichever server connection ran the
statement: behind PgBouncer in transaction mode that connection returns to the bouncer's pool at
once, so the unlock may run on another one, and another client handed the same server connection
would take the "held" lock again (advisory locks are re-entrant per session). A transaction keeps
one server connection for its whole life, direct or behind a bouncer, and its end (commit,
rollback, or the server ending it when the client dies) releases the lock.

The transaction writes nothing and, while idle, holds no snapshot: the lock query's unnamed portal
(extended protocol) would keep one, and with it vacuum's horizon, for the whole run, so an empty
simple query replaces it. Its ``idle_in_transaction_session_timeout`` is turned off; a bouncer's
``idle_transaction_timeout`` must exceed the longest run.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import asyncpg

from runiq.errors import VectorStoreUnavailableError
from runiq.logging import get_logger
from runiq_postgresql.connection import Connection
from runiq_postgresql.errors import guarded

__all__ = ["advisory_lease"]

log = get_logger(__name__)

_BEGIN = "BEGIN; SET LOCAL idle_in_transaction_session_timeout = 0"
_TRY_LOCK = "SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))"
_TRY_LOCK_SHARED = "SELECT pg_try_advisory_xact_lock_shared(hashtextextended($1, 0))"
_DROP_PORTAL = "SELECT"  # a simple query: it replaces (and drops) the unnamed portal


@contextlib.asynccontextmanager
async def advisory_lease(pool: asyncpg.Pool, key: str, *, shared: bool = False) -> AsyncIterator[bool]:
    """Yield whether this caller holds the lease named ``key``; it is released when the block exits.

    A ``shared`` lease is held by any number of callers at once, and by none while an exclusive one is.
    """
    async with pool.acquire() as conn:
        try:
            await guarded(conn.execute(_BEGIN))
            acquired = bool(await guarded(conn.fetchval(_TRY_LOCK_SHARED if shared else _TRY_LOCK, key)))
            await guarded(conn.execute(_DROP_PORTAL))
            yield acquired
        finally:
            await _end(conn)


async def _end(conn: Connection) -> None:
    """Roll back, releasing the lock; a connection that cannot is terminated, never returned holding it.

    A connection lost during the run took the lock with it: the lease then ends without an error.
    """
    try:
        if not _closed(conn) and conn.is_in_transaction():
            await guarded(conn.execute("ROLLBACK"))
    except VectorStoreUnavailableError:
        if not _closed(conn):
            _terminate(conn)
            raise
    except BaseException:
        _terminate(conn)
        raise
    if _closed(conn):
        log.warning("postgresql.lease_connection_lost")


def _closed(conn: Connection) -> bool:
    try:
        return bool(conn.is_closed())
    except asyncpg.InterfaceError:  # a proxy the pool took back when its connection closed
        return True


def _terminate(conn: Connection) -> None:
    with contextlib.suppress(asyncpg.InterfaceError):
        conn.terminate()
