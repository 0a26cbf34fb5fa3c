"""ReadRouter's rules on stand-in pools, no server: which candidate a read gets, when it is retried, and
what the probes decide.

Each ``FakeServer`` answers the two probe statements as a PostgreSQL server would (the primary its
flushed WAL position, a replica whether it is in recovery, behind, and the age of its last replayed
commit), so ``health.probe_replica`` itself decides lag. A read is a function of the connection it
gets; the server that connection belongs to says where it ran. ``test_replicas.py`` proves the same
routing against a real streaming standby; these cover the branches a real standby cannot be made to
take on demand (two replicas failing at once, a recovery conflict, a probe that hangs).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import pytest

from runiq_postgresql import read_from_primary
from runiq_postgresql.health import ReplicaReason
from runiq_postgresql.replicas import ReadRouter, ReplicaPolicy

NEVER = 3600.0  # a check interval no test reaches: state changes only by the probes a test runs


@dataclass(eq=False)
class FakeServer:
    """One server's pool. ``standby``/``behind``/``since_replay`` are what its probe reads."""

    name: str
    standby: bool = True
    behind: bool = False
    since_replay: float | None = None
    acquired: int = 0
    probe_gate: asyncio.Event | None = None  # when set: its probe waits for it (a replica that hangs)

    @asynccontextmanager
    async def acquire(self) -> AsyncIterator[FakeConnection]:
        self.acquired += 1
        yield FakeConnection(self)


@dataclass
class FakeConnection:
    server: FakeServer

    async def fetchval(self, query: str, *args: Any) -> Any:
        assert "pg_current_wal_flush_lsn" in query
        return "0/3000000"

    async def fetchrow(self, query: str, *args: Any) -> dict[str, Any]:
        assert "pg_is_in_recovery" in query
        server = self.server
        if server.probe_gate is not None:
            await server.probe_gate.wait()
        return {"standby": server.standby, "behind": server.behind, "since_replay": server.since_replay}


@dataclass
class Servers:
    """A primary and replicas by DSN; ``opened``/``released`` record the replica pools' lifecycle."""

    primary: FakeServer = field(default_factory=lambda: FakeServer("primary", standby=False))
    replicas: dict[str, FakeServer] = field(default_factory=dict)
    down: set[str] = field(default_factory=set)
    opened: list[str] = field(default_factory=list)
    released: list[str] = field(default_factory=list)
    open_gate: asyncio.Event | None = None  # when set: opening a pool waits for it

    def replica(self, dsn: str, **state: Any) -> FakeServer:
        self.replicas[dsn] = FakeServer(dsn, **state)
        return self.replicas[dsn]

    async def open_pool(self, dsn: str) -> Any:
        if self.open_gate is not None:
            await self.open_gate.wait()
        if dsn in self.down:
            raise ConnectionRefusedError(111, "Connection refused")
        self.opened.append(dsn)
        return self.replicas[dsn]

    async def release_pool(self, pool: Any) -> None:
        self.released.append(pool.name)

    def router(self, *dsns: str, max_lag: float = 10.0, interval: float = NEVER) -> ReadRouter:
        return ReadRouter(
            self.primary,  # type: ignore[arg-type]
            dsns,
            policy=ReplicaPolicy(max_lag_seconds=max_lag, check_interval_seconds=interval),
            open_pool=self.open_pool,
            release_pool=self.release_pool,
        )


@pytest.fixture
def servers() -> Servers:
    return Servers()


@asynccontextmanager
async def probed(router: ReadRouter) -> AsyncIterator[ReadRouter]:
    await router.refresh()
    try:
        yield router
    finally:
        await router.aclose()


def where(router: ReadRouter) -> Callable[[], Awaitable[str]]:
    """A read that answers with the name of the server it ran on."""

    async def read() -> str:
        async with router.connection() as conn:
            return str(conn.server.name)

    return read


def failing(router: ReadRouter, error: Callable[[], BaseException], ran: list[str]) -> Callable[[], Awaitable[str]]:
    """A read that fails with ``error()`` on every replica and answers on the primary."""

    async def read() -> str:
        async with router.connection() as conn:
            ran.append(conn.server.name)
            if conn.server.standby:
                raise error()
            return str(conn.server.name)

    return read


def lost() -> BaseException:
    return asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed in the middle of operation")


# -- lag and state -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "in_use", "reason"),
    [
        ({"behind": False, "since_replay": 3600.0}, True, None),  # caught up: lag 0 however old the last commit
        ({"behind": True, "since_replay": 10.0}, True, None),  # exactly at the bound: still in use
        ({"behind": True, "since_replay": 10.5}, False, ReplicaReason.LAGGING),
        ({"behind": True, "since_replay": None}, False, ReplicaReason.LAGGING),  # behind, lag unknown
        ({"standby": False}, False, ReplicaReason.NOT_STANDBY),  # a promoted replica takes no reads
    ],
    ids=["caught-up", "at-bound", "beyond-bound", "unknown", "not-standby"],
)
async def test_a_replica_serves_reads_only_within_the_lag_bound(
    servers: Servers, state: dict[str, Any], in_use: bool, reason: ReplicaReason | None
) -> None:
    servers.replica("r0", **state)
    async with probed(servers.router("r0", max_lag=10.0)) as router:
        (health,) = router.report()
        assert (health.in_use, health.reason) == (in_use, reason)
        assert await router.run(where(router)) == ("r0" if in_use else "primary")


async def test_a_replica_whose_last_probe_is_older_than_two_intervals_is_not_used(servers: Servers) -> None:
    """A probe that never finishes leaves the last result to age out: reads go to the primary."""
    replica = servers.replica("r0")
    async with probed(servers.router("r0", interval=0.05)) as router:
        assert await router.run(where(router)) == "r0"
        replica.probe_gate = asyncio.Event()  # never set: the background probe hangs
        await asyncio.sleep(0.06)
        assert await router.run(where(router)) == "r0"  # stale: starts a probe, does not wait for it
        await asyncio.sleep(0.1)  # now more than two intervals since the last completed probe
        assert await router.run(where(router)) == "primary"


async def test_one_background_probe_per_replica_whatever_the_reads(servers: Servers) -> None:
    """Reads that find a probe stale start one probe, not one each; none waits for it."""
    replica = servers.replica("r0")
    async with probed(servers.router("r0", interval=0.05)) as router:
        await asyncio.sleep(0.06)  # the probe is stale now
        probes_before = replica.acquired
        answers = await asyncio.gather(*(router.run(where(router)) for _ in range(20)))
        assert set(answers) == {"r0"}
        await asyncio.sleep(0.01)  # let the background probe finish
        assert replica.acquired - probes_before == 20 + 1


async def test_concurrent_probes_open_one_pool(servers: Servers) -> None:
    """Two probes of a replica whose pool is not open yet: it is opened once (none leaks)."""
    servers.replica("r0")
    servers.open_gate = asyncio.Event()
    router = servers.router("r0")
    probes = asyncio.gather(router.refresh(), router.refresh())
    await asyncio.sleep(0.01)
    servers.open_gate.set()
    await probes
    await router.aclose()
    assert servers.opened == ["r0"]
    assert servers.released == ["r0"]


# -- routing -------------------------------------------------------------------------------------------


async def test_reads_rotate_over_replicas_in_use_and_skip_one_that_is_down(servers: Servers) -> None:
    servers.replica("r0")
    servers.replica("r1")
    servers.replica("r2")
    servers.down.add("r1")
    async with probed(servers.router("r0", "r1", "r2")) as router:
        answers = [await router.run(where(router)) for _ in range(4)]
    assert sorted(answers) == ["r0", "r0", "r2", "r2"]


async def test_read_from_primary_covers_the_block_and_its_tasks(servers: Servers) -> None:
    servers.replica("r0")
    async with probed(servers.router("r0")) as router:
        with read_from_primary():
            assert await router.run(where(router)) == "primary"
            assert await asyncio.create_task(router.run(where(router))) == "primary"
        assert await router.run(where(router)) == "r0"


async def test_a_connection_outside_a_routed_read_is_the_primary_s(servers: Servers) -> None:
    """Writes and ingestion take the primary's connection: never a replica's, whatever is in use."""
    servers.replica("r0")
    async with probed(servers.router("r0")) as router:
        assert await where(router)() == "primary"


async def test_another_store_s_connection_inside_a_routed_read_is_its_own(servers: Servers) -> None:
    """A routed read of one store hands its replica to that store's connections only."""
    servers.replica("r0")
    other = Servers(primary=FakeServer("other-primary", standby=False))
    other.replica("o0")
    async with probed(servers.router("r0")) as router, probed(other.router("o0")) as other_router:

        async def both() -> tuple[str, str]:
            return await where(router)(), await where(other_router)()

        assert await router.run(both) == ("r0", "other-primary")


# -- failures and retries ---------------------------------------------------------------------------


async def test_a_lost_replica_connection_is_retried_once_on_the_primary(servers: Servers) -> None:
    """The replica is out of use until its next probe; the next read goes to the primary directly."""
    servers.replica("r0")
    ran: list[str] = []
    async with probed(servers.router("r0")) as router:
        assert await router.run(failing(router, lost, ran)) == "primary"
        assert ran == ["r0", "primary"]
        (health,) = router.report()
        assert (health.in_use, health.reason) == (False, ReplicaReason.FAILED)
        assert await router.run(where(router)) == "primary"
        await router.refresh()
        assert await router.run(where(router)) == "r0"


async def test_a_failed_replica_read_runs_exactly_once_more(servers: Servers) -> None:
    """Two replicas in use that both lose the connection: two attempts, then the error (never a third)."""
    servers.replica("r0")
    servers.replica("r1")
    ran: list[str] = []
    async with probed(servers.router("r0", "r1")) as router:
        with pytest.raises(asyncpg.exceptions.ConnectionDoesNotExistError):
            await router.run(failing(router, lost, ran))
    assert sorted(ran) == ["r0", "r1"]


@pytest.mark.parametrize(
    "error",
    [
        lambda: asyncpg.exceptions.SerializationError("canceling statement due to conflict with recovery"),
        lambda: asyncpg.exceptions.UndefinedTableError('relation "chunks_7" does not exist'),
    ],
    ids=["recovery-conflict", "table-not-replayed"],
)
async def test_a_replica_that_cannot_answer_this_read_is_retried_and_stays_in_use(
    servers: Servers, error: Callable[[], BaseException]
) -> None:
    servers.replica("r0")
    ran: list[str] = []
    async with probed(servers.router("r0")) as router:
        assert await router.run(failing(router, error, ran)) == "primary"
        assert ran == ["r0", "primary"]
        assert router.report()[0].in_use


@pytest.mark.parametrize(
    "error",
    [
        lambda: asyncpg.exceptions.DivisionByZeroError("division by zero"),
        lambda: asyncpg.exceptions.QueryCanceledError("canceling statement due to statement timeout"),
        lambda: ValueError("the read's own bug"),
    ],
    ids=["sql-error", "statement-timeout", "python-error"],
)
async def test_a_read_s_own_error_is_not_retried(servers: Servers, error: Callable[[], BaseException]) -> None:
    servers.replica("r0")
    ran: list[str] = []
    async with probed(servers.router("r0")) as router:
        with pytest.raises(type(error())):
            await router.run(failing(router, error, ran))
        assert ran == ["r0"]
        assert router.report()[0].in_use


async def test_an_error_not_from_the_replica_s_connection_is_not_retried(servers: Servers) -> None:
    """A lost connection elsewhere (the primary's, looking up the index) is not the replica's failure."""
    servers.replica("r0")
    calls = 0

    async def read() -> str:
        nonlocal calls
        calls += 1
        raise lost()

    async with probed(servers.router("r0")) as router:
        with pytest.raises(asyncpg.exceptions.ConnectionDoesNotExistError):
            await router.run(read)
        assert calls == 1
        assert router.report()[0].in_use


# -- lifecycle ---------------------------------------------------------------------------------------


async def test_close_cancels_a_probe_in_flight_and_releases_every_replica_pool(servers: Servers) -> None:
    servers.replica("r0", probe_gate=asyncio.Event())  # never set: once open, its probes hang
    servers.replica("r1")
    router = servers.router("r0", "r1", interval=0.01)
    refresh = asyncio.create_task(router.refresh())
    await asyncio.sleep(0.05)
    await router.run(where(router))  # finds r0's probe stale: a background probe starts (and hangs)
    probing = router._replicas[0].probing
    assert probing is not None
    refresh.cancel()
    await router.aclose()
    assert probing.cancelled()
    assert sorted(servers.released) == ["r0", "r1"]


async def test_a_probe_that_opens_a_pool_after_close_releases_it(servers: Servers) -> None:
    """``refresh()`` (a health check) still opening a replica's pool when the router closes: the pool
    it gets is released, not kept by a closed router."""
    servers.replica("r0")
    servers.open_gate = asyncio.Event()
    router = servers.router("r0")
    refresh = asyncio.create_task(router.refresh())
    await asyncio.sleep(0.01)  # the probe waits in the pool's open
    await router.aclose()
    servers.open_gate.set()
    (health,) = await refresh
    assert servers.opened == ["r0"]
    assert servers.released == ["r0"]
    assert not health.in_use
