"""Read routing: searches and counts (chunks, documents) on streaming replicas, everything else on the primary.

A store with ``read_dsns`` holds a :class:`ReadRouter`. Its routed reads (methods decorated with
:func:`routed_read`, which take their connection from :meth:`ReadRouter.connection`) run on a
replica in use, round robin, or on the primary when none is. Writes, the schema, ingestion state and
runs, the ingestion lease and every advisory lock take the primary pool directly.

A replica is in use while its last probe (``health.probe_replica``) found it reachable, in recovery
and lagging by at most ``replica_max_lag_seconds``, and that probe is at most two check intervals
old. Probes run at open, in the background when a read finds one older than the interval (a read
never waits for one), and on :meth:`ReadRouter.refresh`. Lag grows at most as fast as time passes,
so a replica that serves a read is at most ``max_lag + 2 x interval`` behind the primary.

A routed read that fails on a replica is run once more, on the next candidate (another replica in
use, else the primary): when the replica went away (lost connection, shutdown, timeout: it is also
taken out of use until its next probe), or could not answer this read (a recovery conflict cancelled
it, or it has not replayed the index's tables yet). Other errors are the read's own and propagate.

Read-your-writes: a replica may not hold a write yet. Reads inside :func:`read_from_primary` go to
the primary, for a request that writes documents and then searches them.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Concatenate, ParamSpec, Protocol, TypeVar

import asyncpg

from runiq.logging import get_logger
from runiq_postgresql.connection import Connection
from runiq_postgresql.health import (
    HEALTH_TIMEOUT_SECONDS,
    ReplicaHealth,
    ReplicaReason,
    primary_wal_position,
    probe_replica,
    unreachable_replica,
)
from runiq_postgresql.settings import PostgresStoreOptions

__all__ = ["ReadRouter", "ReplicaPolicy", "read_from_primary", "routed_read"]

log = get_logger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

# The replica went away: the connection was lost or refused, the server is shutting down, or it hung.
_DOWN = (
    OSError,
    EOFError,
    TimeoutError,
    asyncpg.InterfaceError,
    asyncpg.PostgresConnectionError,
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
    asyncpg.CannotConnectNowError,
    asyncpg.DatabaseDroppedError,
)
# The replica is up but cannot answer this read: a recovery conflict cancelled it (40001), or it has
# not replayed the index's tables yet (42P01).
_BEHIND = (asyncpg.SerializationError, asyncpg.UndefinedTableError)

_primary_reads: ContextVar[bool] = ContextVar("runiq_postgresql_primary_reads", default=False)


@contextlib.contextmanager
def read_from_primary() -> Iterator[None]:
    """Every store's routed reads in this block, and in tasks started from it, go to the primary.

    Use it where a read must see a write just made (read-your-writes)::

        await store.replace_document(...)
        with read_from_primary():
            hits = await retriever.retrieve(query)
    """
    token = _primary_reads.set(True)
    try:
        yield
    finally:
        _primary_reads.reset(token)


@dataclass(frozen=True, slots=True)
class ReplicaPolicy:
    max_lag_seconds: float
    check_interval_seconds: float


@dataclass(slots=True)
class _Replica:
    name: str  # read_dsns[i]: what reports and logs show
    dsn: str = field(repr=False)
    health: ReplicaHealth
    pool: asyncpg.Pool | None = None  # opened by the first probe that reaches the server
    checked_at: float = float("-inf")  # time.monotonic() of the last probe
    probing: asyncio.Task[None] | None = None  # a background probe in flight
    opening: asyncio.Lock = field(default_factory=asyncio.Lock)  # one pool, whoever probes first


@dataclass(slots=True)
class _Attempt:
    """The candidate one run of a routed read uses; ``failed``: an error left one of its connections."""

    router: ReadRouter
    pool: asyncpg.Pool
    failed: bool = False


_attempt: ContextVar[_Attempt | None] = ContextVar("runiq_postgresql_read_attempt", default=None)

_Candidate = tuple[asyncpg.Pool, _Replica | None]  # a pool to read on, and the replica it belongs to
PoolOpener = Callable[[str], Awaitable[asyncpg.Pool]]
PoolReleaser = Callable[[asyncpg.Pool], Awaitable[None]]


class ReadRouter:
    """Where a store's routed reads run; without replicas, always on the primary (no probes, no retries)."""

    def __init__(
        self,
        primary: asyncpg.Pool,
        dsns: Sequence[str] = (),
        *,
        policy: ReplicaPolicy | None = None,
        open_pool: PoolOpener | None = None,
        release_pool: PoolReleaser | None = None,
    ) -> None:
        if dsns and (policy is None or open_pool is None or release_pool is None):
            raise ValueError("replicas need a policy and a way to open and release their pools")
        self._primary = primary
        self._policy = policy
        self._open_pool = open_pool
        self._release_pool = release_pool
        self._replicas = [
            _Replica(name=f"read_dsns[{i}]", dsn=dsn, health=unreachable_replica(f"read_dsns[{i}]"))
            for i, dsn in enumerate(dsns)
        ]
        self._turn = itertools.count()
        self._closed = False

    @classmethod
    async def open(
        cls,
        primary: asyncpg.Pool,
        options: PostgresStoreOptions,
        *,
        open_pool: PoolOpener,
        release_pool: PoolReleaser,
    ) -> ReadRouter:
        """The router of a store's ``read_dsns``, each replica probed once (``HEALTH_TIMEOUT_SECONDS`` at most)."""
        policy = ReplicaPolicy(
            max_lag_seconds=options.replica_max_lag_seconds,
            check_interval_seconds=options.replica_check_interval_seconds,
        )
        dsns = [dsn.get_secret_value() for dsn in options.read_dsns]
        router = cls(primary, dsns, policy=policy, open_pool=open_pool, release_pool=release_pool)
        try:
            await router.refresh()
        except BaseException:
            await router.aclose()
            raise
        return router

    # -- routing ---------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[Connection]:
        """A connection of the current attempt's candidate (inside a routed read), else of the primary."""
        attempt = _attempt.get()
        if attempt is None or attempt.router is not self:
            async with self._primary.acquire() as conn:
                yield conn
            return
        try:
            async with attempt.pool.acquire() as conn:
                yield conn
        except BaseException:
            attempt.failed = True
            raise

    async def run(self, read: Callable[[], Awaitable[T]]) -> T:
        """Run ``read`` on the first candidate; once more on the next if the first was a replica that failed."""
        if not self._replicas:
            return await read()
        candidates = self._candidates()
        for position, (pool, replica) in enumerate(candidates):
            attempt = _Attempt(self, pool)
            token = _attempt.set(attempt)
            try:
                return await read()
            except (*_DOWN, *_BEHIND) as exc:
                if replica is None or not attempt.failed or position + 1 == len(candidates):
                    raise
                self._failed(replica, exc)
            finally:
                _attempt.reset(token)
        raise AssertionError("unreachable: the last candidate returns or raises")

    def _candidates(self) -> list[_Candidate]:
        """At most two: the next replica in use (round robin) and then another one, or the primary."""
        primary: _Candidate = (self._primary, None)
        if _primary_reads.get():
            return [primary]
        now = time.monotonic()
        self._refresh_stale(now)
        assert self._policy is not None
        horizon = now - 2 * self._policy.check_interval_seconds
        usable = [r for r in self._replicas if r.health.in_use and r.pool is not None and r.checked_at >= horizon]
        if not usable:
            return [primary]
        start = next(self._turn) % len(usable)
        ordered: list[_Candidate] = [(r.pool, r) for r in usable[start:] + usable[:start] if r.pool is not None]
        return [*ordered[:2], primary][:2]

    def _failed(self, replica: _Replica, exc: BaseException) -> None:
        """A read failed there: out of use until its next probe when it went away, else just retried."""
        if isinstance(exc, _DOWN):
            health = replica.health
            replica.health = ReplicaHealth(
                health.name, reachable=False, lag_seconds=None, in_use=False, reason=ReplicaReason.FAILED
            )
        log.warning("postgresql.replica_read_retried", replica=replica.name, error=type(exc).__name__)

    # -- probes ----------------------------------------------------------------------------------

    def report(self) -> tuple[ReplicaHealth, ...]:
        """Each replica as last probed (or failed since), in ``read_dsns`` order."""
        return tuple(replica.health for replica in self._replicas)

    async def refresh(self) -> tuple[ReplicaHealth, ...]:
        """Probe every replica now (concurrently) and return the report."""
        await asyncio.gather(*(self._probe(replica) for replica in self._replicas))
        return self.report()

    def _refresh_stale(self, now: float) -> None:
        assert self._policy is not None
        if self._closed:
            return
        for replica in self._replicas:
            if replica.probing is None and now - replica.checked_at > self._policy.check_interval_seconds:
                replica.probing = asyncio.create_task(self._probe_in_background(replica))

    async def _probe_in_background(self, replica: _Replica) -> None:
        try:
            await self._probe(replica)
        finally:
            replica.probing = None

    async def _probe(self, replica: _Replica) -> None:
        policy, open_pool = self._policy, self._open_pool
        assert policy is not None
        assert open_pool is not None
        reference = await primary_wal_position(self._primary)
        health = unreachable_replica(replica.name)
        async with replica.opening:
            if replica.pool is None and not self._closed:
                try:
                    async with asyncio.timeout(HEALTH_TIMEOUT_SECONDS):
                        replica.pool = await open_pool(replica.dsn)
                except Exception as exc:  # down, or not yet holding the extensions' types
                    log.info("postgresql.replica_open_failed", replica=replica.name, error=type(exc).__name__)
            if self._closed:  # closed while this probe opened the pool: a closed router keeps none
                await self._drop_pool(replica)
                return
        if replica.pool is not None:
            max_lag = policy.max_lag_seconds
            health = await probe_replica(replica.name, replica.pool, reference=reference, max_lag=max_lag)
        replica.checked_at = time.monotonic()
        self._record(replica, health)

    def _record(self, replica: _Replica, health: ReplicaHealth) -> None:
        before = replica.health
        replica.health = health
        if (before.in_use, before.reason) != (health.in_use, health.reason):
            level = log.info if health.in_use else log.warning
            level(
                "postgresql.replica_state",
                replica=health.name,
                in_use=health.in_use,
                reason=None if health.reason is None else health.reason.value,
                lag_seconds=health.lag_seconds,
            )

    # -- lifecycle -------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Stop probes in flight and release the replicas' pools (the primary's is the store's).

        A :meth:`refresh` still running releases the pool it opens itself, once that open returns.
        """
        self._closed = True
        tasks = [replica.probing for replica in self._replicas if replica.probing is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for replica in self._replicas:
            await self._drop_pool(replica)

    async def _drop_pool(self, replica: _Replica) -> None:
        pool, replica.pool = replica.pool, None
        if pool is not None and self._release_pool is not None:
            await self._release_pool(pool)


class _Routed(Protocol):
    @property
    def read_router(self) -> ReadRouter: ...


S = TypeVar("S", bound=_Routed)


def routed_read(method: Callable[Concatenate[S, P], Awaitable[T]]) -> Callable[Concatenate[S, P], Awaitable[T]]:
    """Run a store read through its router; its connection comes from ``self.read_router.connection()``."""

    @functools.wraps(method)
    async def wrapper(self: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self.read_router.run(functools.partial(method, self, *args, **kwargs))

    return wrapper
