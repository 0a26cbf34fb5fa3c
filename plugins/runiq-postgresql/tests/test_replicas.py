"""Read replicas: searches and counts on a streaming standby, everything else on the primary.

The ``streaming_pair`` fixture (conftest) is a private embedded primary and a hot standby made from it
by ``pg_basebackup``, streaming over a replication slot. Which server answered is shown two ways: with
replay paused on the standby, a document written since is on the primary only; and
``pg_is_in_recovery()`` on the connection the router hands out.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any, Protocol

import asyncpg
import numpy as np
import pytest
from pydantic import SecretStr, ValidationError
from structlog.testing import capture_logs

from runiq.rag.providers import IndexSpec, StoredDocument, parse_lexical_query
from runiq.rag.testing import LexicalSearchContract, VectorStoreContract, make_chunks
from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore, read_from_primary
from runiq_postgresql.health import ReplicaHealth, ReplicaReason, replica_lag

INDEX = "docs"
DIMENSIONS = 4
NEVER = 3600.0  # a check interval no test reaches: replica state changes only by probes the test asks for


class StreamingPair(Protocol):
    """The ``streaming_pair`` fixture (conftest modules are not importable by name)."""

    primary_dsn: str
    synced_primary_dsn: str
    standby_dsn: str

    def stop_standby(self, mode: str = "fast") -> None: ...
    def stop_primary(self) -> None: ...
    def start_primary(self) -> None: ...
    def start_standby(self) -> None: ...
    async def wait_caught_up(self) -> None: ...
    async def wait_on_standby(self, query: str, *args: Any) -> None: ...
    async def wait_on_primary(self, query: str, *args: Any) -> None: ...
    def replay_paused(self) -> Any: ...


@pytest.fixture
async def schema(streaming_pair: StreamingPair) -> AsyncIterator[str]:
    """A fresh schema on the pair's primary, dropped afterwards (the drop replays on the standby)."""
    name = f"r_{uuid.uuid4().hex[:16]}"
    yield name
    conn = await asyncpg.connect(streaming_pair.primary_dsn)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    finally:
        await conn.close()


@pytest.fixture
def options(streaming_pair: StreamingPair, schema: str) -> PostgresStoreOptions:
    return PostgresStoreOptions(
        dsn=streaming_pair.primary_dsn,
        read_dsns=[streaming_pair.standby_dsn],
        schema=schema,
        pool_max_size=4,
        replica_max_lag_seconds=60,
        replica_check_interval_seconds=NEVER,
    )


@pytest.fixture
async def synced_options(streaming_pair: StreamingPair, options: PostgresStoreOptions) -> PostgresStoreOptions:
    """Writes as the role whose commits wait for the standby to apply them: reads on it see every write."""
    await streaming_pair.wait_caught_up()  # the standby is up: a synced commit would wait for it forever
    return options.model_copy(update={"dsn": SecretStr(streaming_pair.synced_primary_dsn)})


@asynccontextmanager
async def opened(options: PostgresStoreOptions) -> AsyncIterator[PostgresVectorStore]:
    async with PostgresVectorStore(options) as store:
        await store.ensure_index(IndexSpec(name=INDEX, dimensions=DIMENSIONS, embedding_model="m"))
        yield store


async def write(store: PostgresVectorStore, document_id: str, text: str) -> None:
    vector = np.full((1, DIMENSIONS), 1.0 + len(document_id), dtype=np.float32)
    document = StoredDocument(document_id=document_id, content_hash=f"h-{document_id}")
    await store.replace_document(INDEX, document, make_chunks(document_id, [text]), vector)


async def vector_ids(store: PostgresVectorStore) -> set[str]:
    hits = await store.search(INDEX, np.ones(DIMENSIONS), top_k=10)
    return {hit.document_id for hit in hits}


async def lexical_ids(store: PostgresVectorStore, query: str) -> set[str]:
    hits = await store.lexical_search(INDEX, parse_lexical_query(query), top_k=10)
    return {hit.document_id for hit in hits}


async def reads_on_standby(store: PostgresVectorStore) -> bool:
    """``pg_is_in_recovery()`` on the connection a routed read gets: the path searches take."""

    async def in_recovery() -> bool:
        async with store.read_router.connection() as conn:
            return bool(await conn.fetchval("SELECT pg_is_in_recovery()"))

    return await store.read_router.run(in_recovery)


async def fresh_replica(store: PostgresVectorStore, pair: StreamingPair) -> ReplicaHealth:
    await pair.wait_caught_up()
    (health,) = await store.replica_health()
    return health


# -- options and lag (no server) -----------------------------------------------------------------


def test_read_dsns_are_secret() -> None:
    """Replica DSNs are SecretStr like the primary's: not in repr; reports name them read_dsns[i]."""
    options = PostgresStoreOptions(dsn="postgresql://app@db/rag", read_dsns=["postgresql://app:hunter2@r1/rag"])
    assert "hunter2" not in repr(options)
    assert [dsn.get_secret_value() for dsn in options.read_dsns] == ["postgresql://app:hunter2@r1/rag"]


@pytest.mark.parametrize(
    "values",
    [
        {"read_dsns": ["postgresql://r1/rag"]},  # replicas of the embedded server
        {"dsn": "postgresql://db/rag", "read_dsns": [" "]},
        {"dsn": "postgresql://db/rag", "read_dsns": ["postgresql://r1/rag", "postgresql://r1/rag"]},
        {"dsn": "postgresql://db/rag", "read_dsns": ["postgresql://db/rag"]},
        {"dsn": "postgresql://db/rag", "replica_max_lag_seconds": 0},
        {"dsn": "postgresql://db/rag", "replica_check_interval_seconds": 0},
    ],
)
def test_invalid_replica_options_are_refused(values: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        PostgresStoreOptions.model_validate(values)


@pytest.mark.parametrize(
    "values",
    [
        {"dsn": "postgresql://app:hunter2@db/rag", "read_dsns": ["postgresql://app:hunter2@db/rag"]},
        {"dsn": "postgresql://app@db/rag", "read_dsns": ["postgresql://app:hunter2@r1/rag"] * 2},
        {"read_dsns": ["postgresql://app:hunter2@r1/rag"]},
    ],
    ids=["names-the-primary", "twice", "no-primary"],
)
def test_a_refused_replica_option_does_not_quote_a_dsn(values: dict[str, object]) -> None:
    """The validation error names the rule, never the DSNs it compared (they hold passwords)."""
    with pytest.raises(ValidationError) as caught:
        PostgresStoreOptions.model_validate(values)
    assert "hunter2" not in str(caught.value)
    assert "read_dsns" in str(caught.value)


def test_lag_is_zero_when_caught_up_else_the_age_of_the_last_replayed_commit() -> None:
    assert replica_lag(behind=False, since_replay=None) == 0.0
    assert replica_lag(behind=False, since_replay=3600.0) == 0.0  # an idle primary: nothing to replay
    assert replica_lag(behind=True, since_replay=2.5) == 2.5
    assert replica_lag(behind=True, since_replay=-0.1) == 0.0  # the replica's clock behind the primary's
    assert replica_lag(behind=True, since_replay=None) is None  # nothing replayed since it started


# -- routing -------------------------------------------------------------------------------------


async def test_searches_and_counts_read_from_the_replica(
    streaming_pair: StreamingPair, options: PostgresStoreOptions
) -> None:
    """Vector, lexical and both counts read the standby: a document written while replay is paused is missing
    there until replay resumes; ``read_from_primary()`` sees it at once."""
    async with opened(options) as store:
        await write(store, "a", "alpha common")
        health = await fresh_replica(store, streaming_pair)
        assert health == ReplicaHealth("read_dsns[0]", reachable=True, lag_seconds=0.0, in_use=True)
        assert await reads_on_standby(store)

        async with streaming_pair.replay_paused():
            await write(store, "b", "beta common")
            assert await vector_ids(store) == {"a"}
            assert await lexical_ids(store, "common") == {"a"}
            assert await lexical_ids(store, "beta") == set()
            assert (await store.count(INDEX), await store.document_count(INDEX)) == (1, 1)
            with read_from_primary():
                assert not await reads_on_standby(store)
                assert await vector_ids(store) == {"a", "b"}
                assert await lexical_ids(store, "beta") == {"b"}
                assert (await store.count(INDEX), await store.document_count(INDEX)) == (2, 2)
            assert (await store.count(INDEX), await store.document_count(INDEX)) == (1, 1)  # the replica again

        await streaming_pair.wait_caught_up()
        assert await vector_ids(store) == {"a", "b"}
        assert await lexical_ids(store, "beta") == {"b"}


async def test_writes_schema_and_ingestion_state_go_to_the_primary(
    streaming_pair: StreamingPair, options: PostgresStoreOptions
) -> None:
    """With replay paused every write succeeds (the standby would refuse it) and ingestion's reads see it."""
    async with opened(options) as store:
        await write(store, "a", "alpha")
        assert (await fresh_replica(store, streaming_pair)).in_use
        async with streaming_pair.replay_paused():
            await store.ensure_index(IndexSpec(name="other", dimensions=DIMENSIONS, embedding_model="m"))
            await write(store, "b", "beta")
            document = StoredDocument(document_id="c", content_hash="h-c")
            await store.replace_documents(INDEX, [(document, make_chunks("c", ["gamma"]), np.ones((1, DIMENSIONS)))])
            assert await store.delete_documents(INDEX, ["a"]) == 1
            assert dict(await store.document_hashes(INDEX)) == {"b": "h-b", "c": "h-c"}
            assert list(await store.document_id_page(INDEX, after=None, limit=10)) == ["b", "c"]
            async with store.ingestion_lease(INDEX) as held:
                assert held
                primary = await asyncpg.connect(streaming_pair.primary_dsn)
                try:
                    assert await primary.fetchval("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'") == 1
                finally:
                    await primary.close()
            assert await vector_ids(store) == {"a"}  # searches still read the paused replica
        await streaming_pair.wait_caught_up()
        assert await vector_ids(store) == {"b", "c"}


async def test_a_replica_down_at_start_is_skipped_until_it_returns(
    streaming_pair: StreamingPair, options: PostgresStoreOptions
) -> None:
    """The store opens with its replica stopped, reads on the primary; background probes bring it back."""
    streaming_pair.stop_standby()
    try:
        async with opened(options.model_copy(update={"replica_check_interval_seconds": 0.1})) as store:
            assert store.read_router.report() == (
                ReplicaHealth("read_dsns[0]", reachable=False, lag_seconds=None, in_use=False, reason="unreachable"),
            )
            await write(store, "a", "alpha")
            assert await vector_ids(store) == {"a"}
            assert not await reads_on_standby(store)
            streaming_pair.start_standby()
            await streaming_pair.wait_caught_up()
            for _ in range(500):  # reads start the probes; none waits for one
                if await reads_on_standby(store):
                    break
                await asyncio.sleep(0.02)
            assert store.read_router.report()[0].in_use
            assert await vector_ids(store) == {"a"}
    finally:
        if not await _standby_up(streaming_pair):
            streaming_pair.start_standby()


async def test_another_replica_serves_while_one_is_down(
    streaming_pair: StreamingPair, options: PostgresStoreOptions
) -> None:
    """Of two replicas, the one that refuses connections is skipped and the other serves every read."""
    dead = "postgresql://postgres@127.0.0.1:1/postgres"  # port 1: connection refused
    two = options.model_copy(update={"read_dsns": (SecretStr(dead), SecretStr(streaming_pair.standby_dsn))})
    async with opened(two) as store:
        await write(store, "a", "alpha")
        await streaming_pair.wait_caught_up()
        down, up = await store.replica_health()
        assert (down.name, down.reachable, down.reason) == ("read_dsns[0]", False, ReplicaReason.UNREACHABLE)
        assert (up.name, up.in_use) == ("read_dsns[1]", True)
        for _ in range(4):  # round robin over the replicas in use: always the live one
            assert await reads_on_standby(store)
        assert await vector_ids(store) == {"a"}


async def test_searches_go_on_while_the_primary_is_down(
    streaming_pair: StreamingPair, options: PostgresStoreOptions
) -> None:
    """Primary stopped: the probe measures the replica against the WAL it received (all replayed: lag 0),
    so searches and counts of an index the store has met keep answering from the replica."""
    async with opened(options) as store:
        await write(store, "a", "alpha")
        assert (await fresh_replica(store, streaming_pair)).in_use
        streaming_pair.stop_primary()
        try:
            (health,) = await store.replica_health()
            assert (health.in_use, health.lag_seconds) == (True, 0.0)
            assert await vector_ids(store) == {"a"}
            assert await lexical_ids(store, "alpha") == {"a"}
            assert await store.count(INDEX) == 1
        finally:
            streaming_pair.start_primary()
        await streaming_pair.wait_caught_up()


@pytest.fixture
def events() -> Iterator[list[dict[str, Any]]]:
    """runiq's events, whether or not an earlier test configured structlog (runiq follows structlog once it is)."""
    with capture_logs() as captured:
        yield captured


async def test_a_replica_killed_mid_query_is_retried_on_the_primary(
    streaming_pair: StreamingPair, options: PostgresStoreOptions, schema: str, events: list[dict[str, Any]]
) -> None:
    """A search waits on the standby (behind a lock replayed from the primary); the standby stops with
    ``-m immediate``; the search runs again on the primary and answers, and the replica is out of use."""
    async with opened(options) as store:
        await write(store, "a", "alpha")
        assert (await fresh_replica(store, streaming_pair)).in_use
        locker = await asyncpg.connect(streaming_pair.primary_dsn)
        flusher = await asyncpg.connect(streaming_pair.primary_dsn)
        try:
            table = await locker.fetchval(
                "SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = $1 AND c.relname LIKE 'chunks\\_%' AND c.relkind = 'r'",
                schema,
            )
            await locker.execute(f"BEGIN; LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
            # The lock's WAL record goes out when the WAL is flushed: a commit elsewhere flushes it now.
            assert await flusher.fetchval("SELECT pg_current_xact_id()")
            await streaming_pair.wait_on_standby(
                "SELECT EXISTS (SELECT FROM pg_locks WHERE mode = 'AccessExclusiveLock' AND relation = $1::regclass)",
                table,
            )
            search = asyncio.create_task(vector_ids(store))
            await streaming_pair.wait_on_standby(_WAITING_SEARCH)
            streaming_pair.stop_standby("immediate")
            await streaming_pair.wait_on_primary(_WAITING_SEARCH)  # the retry, behind the same lock
            await locker.execute("ROLLBACK")
            assert await asyncio.wait_for(search, 60) == {"a"}
        finally:
            await locker.close()
            await flusher.close()
            if not await _standby_up(streaming_pair):
                streaming_pair.start_standby()
        (health,) = store.read_router.report()
        assert (health.in_use, health.reason) == (False, ReplicaReason.FAILED)
        logged = repr(events)
        assert "postgresql.replica_read_retried" in logged
        assert streaming_pair.standby_dsn not in logged
        assert "127.0.0.1" not in logged  # the standby's address: replicas are logged as read_dsns[i]
        assert (await fresh_replica(store, streaming_pair)).in_use
        assert await reads_on_standby(store)


async def test_a_lagging_replica_is_skipped(streaming_pair: StreamingPair, options: PostgresStoreOptions) -> None:
    """Replay paused with a write pending: once the last replayed commit is older than the bound, the
    probe reports it lagging and reads go to the primary; caught up again, it is back in use."""
    async with opened(options.model_copy(update={"replica_max_lag_seconds": 0.5})) as store:
        await write(store, "a", "alpha")
        assert (await fresh_replica(store, streaming_pair)).in_use
        async with streaming_pair.replay_paused():
            await write(store, "b", "beta")
            await streaming_pair.wait_on_standby(
                "SELECT now() - pg_last_xact_replay_timestamp() > interval '0.6 seconds'"
            )
            (health,) = await store.replica_health()
            assert (health.reachable, health.in_use, health.reason) == (True, False, ReplicaReason.LAGGING)
            assert health.lag_seconds is not None
            assert health.lag_seconds > 0.5
            assert await vector_ids(store) == {"a", "b"}
            assert not await reads_on_standby(store)
        health = await fresh_replica(store, streaming_pair)
        assert (health.in_use, health.lag_seconds) == (True, 0.0)
        assert await reads_on_standby(store)


async def test_a_reads_own_error_on_the_replica_is_not_retried(
    streaming_pair: StreamingPair, options: PostgresStoreOptions
) -> None:
    """Only a replica that went away (or could not answer) moves a read on: a SQL error is the read's."""
    async with opened(options) as store:
        assert (await fresh_replica(store, streaming_pair)).in_use
        servers: list[bool] = []

        async def divide_by_zero() -> None:
            async with store.read_router.connection() as conn:
                servers.append(await conn.fetchval("SELECT pg_is_in_recovery()"))
                await conn.fetchval("SELECT 1 / 0")

        with pytest.raises(asyncpg.DivisionByZeroError):
            await store.read_router.run(divide_by_zero)
        assert servers == [True]
        assert store.read_router.report()[0].in_use


_WAITING_SEARCH = (
    "SELECT EXISTS (SELECT FROM pg_stat_activity WHERE application_name = 'runiq' AND wait_event_type = 'Lock')"
)


async def _standby_up(pair: StreamingPair) -> bool:
    try:
        conn = await asyncpg.connect(pair.standby_dsn, timeout=5)
    except (OSError, asyncpg.PostgresError):
        return False
    await conn.close()
    return True


# -- the store contracts, every read on the standby -------------------------------------------------


@asynccontextmanager
async def replica_reading(options: PostgresStoreOptions) -> AsyncIterator[PostgresVectorStore]:
    async with PostgresVectorStore(options) as store:
        assert store.read_router.report()[0].in_use
        yield store
        assert store.read_router.report()[0].in_use  # no read fell back to the primary


class TestReplicaStoreHnsw(VectorStoreContract):
    """Vector contract, HNSW path (settings set in the search's statement on the standby), reads on the standby."""

    @pytest.fixture
    async def store(self, synced_options: PostgresStoreOptions) -> AsyncIterator[PostgresVectorStore]:
        async with replica_reading(synced_options.model_copy(update={"ann_min_rows": 0})) as store:
            yield store


class TestReplicaLexical(LexicalSearchContract):
    """Lexical contract (BM25 in a repeatable-read read-only transaction, phrases, substrings) on the standby."""

    @pytest.fixture
    async def store(self, synced_options: PostgresStoreOptions) -> AsyncIterator[PostgresVectorStore]:
        async with replica_reading(synced_options) as store:
            yield store
