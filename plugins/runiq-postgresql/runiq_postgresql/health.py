"""The store's health probes: the primary's (:func:`probe`) and each read replica's (:func:`probe_replica`).

:func:`probe`: can the store connect, are its extensions there, is its schema the one this code writes.
One short statement on a pooled connection, bounded by ``HEALTH_TIMEOUT_SECONDS``.

:func:`probe_replica`: is a read DSN reachable, a standby, and how far behind the primary. Its lag is
``0`` when it has replayed all the WAL the primary had flushed just before the probe
(:func:`primary_wal_position`; when the primary cannot say, all the WAL the replica has received);
otherwise the age of the last transaction it replayed, ``now()`` on the replica minus that
transaction's commit time on the primary. That age bounds from above how stale the replica's data
is (its clock's skew from the primary's adds to it); right after an idle primary writes again it
overstates, until the replica has replayed the new WAL. ``None``: behind, and no transaction replayed
since the replica started, so unknown.

Neither raises: a failure is a fixed reason code, never the server's message (which can echo DSNs or
identifiers).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from enum import StrEnum

import asyncpg

from runiq.rag.providers import StoreHealth
from runiq_postgresql.schema import LATEST_VERSION, quote_ident

__all__ = [
    "HEALTH_TIMEOUT_SECONDS",
    "ReplicaHealth",
    "ReplicaReason",
    "primary_wal_position",
    "probe",
    "probe_replica",
    "replica_lag",
    "unreachable_replica",
]

HEALTH_TIMEOUT_SECONDS = 5.0
_REQUIRED_EXTENSIONS = ("vector", "pg_trgm")
_PROBE_FAILURES = (TimeoutError, OSError, EOFError, asyncpg.PostgresError, asyncpg.InterfaceError)

# The primary's WAL flushed so far: a replica that has replayed it holds everything committed before.
_PRIMARY_POSITION = "SELECT pg_current_wal_flush_lsn()::text"
_REPLICA_POSITION = """
SELECT pg_is_in_recovery() AS standby,
       coalesce(pg_last_wal_replay_lsn() < coalesce($1::text::pg_lsn, pg_last_wal_receive_lsn()), false) AS behind,
       extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 AS since_replay
"""


class ReplicaReason(StrEnum):
    """Why a replica serves no reads (fixed codes: they appear in reports and logs)."""

    UNREACHABLE = "unreachable"  # the probe could not connect or query within its timeout
    NOT_STANDBY = "not_standby"  # the server is not in recovery (a primary: promoted, or misconfigured)
    LAGGING = "lagging"  # lag above the bound, or behind with an unknown lag
    FAILED = "failed"  # a read on it lost its connection or the server shut down; until the next probe


@dataclass(frozen=True, slots=True)
class ReplicaHealth:
    """One read replica as its last probe (or a failed read since) found it.

    ``name`` is ``read_dsns[i]``, never the DSN. ``lag_seconds`` is ``None`` when unknown. ``in_use``:
    it serves reads; otherwise ``reason`` is a :class:`ReplicaReason` code.
    """

    name: str
    reachable: bool
    lag_seconds: float | None
    in_use: bool
    reason: ReplicaReason | None = None


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


async def primary_wal_position(pool: asyncpg.Pool) -> str | None:
    """The primary's flushed WAL position (``pg_lsn`` text), or ``None`` when it cannot say in time."""
    try:
        async with asyncio.timeout(HEALTH_TIMEOUT_SECONDS), pool.acquire() as conn:
            value = await conn.fetchval(_PRIMARY_POSITION)
    except _PROBE_FAILURES:
        return None
    return None if value is None else str(value)


def replica_lag(*, behind: bool, since_replay: float | None) -> float | None:
    """Seconds a replica lags (see the module docstring): 0 when caught up, ``None`` when unknown."""
    if not behind:
        return 0.0
    return None if since_replay is None else max(0.0, since_replay)


async def probe_replica(name: str, pool: asyncpg.Pool, *, reference: str | None, max_lag: float) -> ReplicaHealth:
    """Probe one replica against the primary's ``reference`` WAL position; never raises."""
    try:
        async with asyncio.timeout(HEALTH_TIMEOUT_SECONDS), pool.acquire() as conn:
            row = await conn.fetchrow(_REPLICA_POSITION, reference)
    except _PROBE_FAILURES:
        return unreachable_replica(name)
    assert row is not None
    if not row["standby"]:
        return ReplicaHealth(name, reachable=True, lag_seconds=None, in_use=False, reason=ReplicaReason.NOT_STANDBY)
    lag = replica_lag(behind=row["behind"], since_replay=row["since_replay"])
    if lag is None or lag > max_lag:
        return ReplicaHealth(name, reachable=True, lag_seconds=lag, in_use=False, reason=ReplicaReason.LAGGING)
    return ReplicaHealth(name, reachable=True, lag_seconds=lag, in_use=True)


def unreachable_replica(name: str) -> ReplicaHealth:
    return ReplicaHealth(name, reachable=False, lag_seconds=None, in_use=False, reason=ReplicaReason.UNREACHABLE)
