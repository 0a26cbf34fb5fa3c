"""Work claims (shared ingestion runs) in PostgreSQL: joining, claiming, leases, takeover, ending.

Two stores on one schema stand for two worker processes (each has its own pool).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest

from runiq.errors import VectorIndexNotFoundError
from runiq.rag._stores.claims import SharedRun, WorkClaims
from runiq.rag.providers import DistanceMetric, IndexSpec
from runiq_postgresql.settings import PostgresStoreOptions
from runiq_postgresql.store import PostgresVectorStore

SPEC = IndexSpec(name="docs", dimensions=None, metric=DistanceMetric.COSINE, embedding_model=None)
LEASE = 1.0  # seconds; expiry is the server's clock


@pytest.fixture
async def stores(options: PostgresStoreOptions) -> AsyncIterator[tuple[PostgresVectorStore, PostgresVectorStore]]:
    first, second = PostgresVectorStore(options), PostgresVectorStore(options)
    await first.open()
    await second.open()
    try:
        await first.ensure_index(SPEC)
        yield first, second
    finally:
        await first.close()
        await second.close()


async def _join(store: PostgresVectorStore, operation_id: str, parts: int = 3, key: str | None = None) -> SharedRun:
    return await store.join_run("docs", operation_id=operation_id, reason="manual", parts=parts, key=key)


async def test_joiners_find_one_running_run(stores: tuple[PostgresVectorStore, PostgresVectorStore]) -> None:
    """Simultaneous joiners get the same run (the first one's id and parts); a new one only after it ended."""
    first, second = stores
    assert isinstance(first, WorkClaims)
    runs = await asyncio.gather(*(_join(store, f"op-{n}", parts=3 + n) for n, store in enumerate(stores * 3)))
    assert len({(run.operation_id, run.parts) for run in runs}) == 1
    run = runs[0]
    assert run.state == "running"
    assert run.result is None
    assert await first.end_run(run, state="completed", record={"progress": {}}) is True
    assert await second.end_run(run, state="failed", record={}) is False  # ended once
    ended = await second.refresh_run(run)
    assert (ended.state, ended.result, ended.completed_at is not None) == ("completed", {"progress": {}}, True)
    assert (await _join(second, "op-next")).operation_id == "op-next"


async def test_each_part_goes_to_one_holder_and_the_finish_comes_last(
    stores: tuple[PostgresVectorStore, PostgresVectorStore],
) -> None:
    """Concurrent claimers never share a part; the finish part is claimable only when every bucket is done."""
    first, second = stores
    run = await _join(first, "op", parts=4)
    claims = await asyncio.gather(
        *(store.claim_part(run, holder=f"w{n}", lease_seconds=60) for n, store in enumerate(stores * 3))
    )
    assert sorted(part for part in claims if part is not None) == [0, 1, 2, 3]  # 6 claimers, 4 buckets
    assert await first.claim_part(run, holder="late", lease_seconds=60) is None  # buckets held, finish not ready
    holders = {part: f"w{n}" for n, part in enumerate(claims) if part is not None}
    for part in (0, 1, 2):
        assert await first.complete_part(run, part, holder=holders[part], record={"n": part}, seen=bytes([part]))
    assert await second.claim_part(run, holder="late", lease_seconds=60) is None  # bucket 3 still held
    assert not await first.complete_part(run, 3, holder="someone-else", record={}, seen=b"")  # not the holder
    assert await first.complete_part(run, 3, holder=holders[3], record={"n": 3}, seen=b"")
    assert await second.claim_part(run, holder="finisher", lease_seconds=60) == run.finish_part == 4
    results = await first.part_results(run)
    assert [(r.part, r.record, r.seen) for r in results] == [
        (0, {"n": 0}, b"\x00"),
        (1, {"n": 1}, b"\x01"),
        (2, {"n": 2}, b"\x02"),
        (3, {"n": 3}, b""),
    ]


async def test_an_expired_lease_is_taken_over_and_the_old_holder_loses_it(
    stores: tuple[PostgresVectorStore, PostgresVectorStore],
) -> None:
    """A holder that stops renewing loses its part after the lease; renewing in time keeps it."""
    first, second = stores
    run = await _join(first, "op", parts=2)
    assert await first.claim_part(run, holder="dead", lease_seconds=LEASE) == 0
    assert await first.claim_part(run, holder="alive", lease_seconds=LEASE) == 1
    await asyncio.sleep(LEASE * 0.6)
    assert await first.renew_part(run, 1, holder="alive", lease_seconds=LEASE)
    await asyncio.sleep(LEASE * 0.6)
    assert await second.claim_part(run, holder="taker", lease_seconds=60) == 0  # only the dead one's part
    assert not await first.renew_part(run, 0, holder="dead", lease_seconds=LEASE)
    assert not await first.complete_part(run, 0, holder="dead", record={}, seen=b"")
    assert await second.complete_part(run, 0, holder="taker", record={}, seen=b"")
    conn = await asyncpg.connect(first.options.dsn.get_secret_value())  # type: ignore[union-attr]
    try:
        takeovers = await conn.fetchval(
            f'SELECT takeovers FROM "{first.options.schema_name}".work_claims WHERE operation_id = $1 AND part = 0',
            "op",
        )
    finally:
        await conn.close()
    assert takeovers == 1


async def test_a_released_part_is_claimable_at_once(stores: tuple[PostgresVectorStore, PostgresVectorStore]) -> None:
    first, second = stores
    run = await _join(first, "op", parts=1)
    assert await first.claim_part(run, holder="leaving", lease_seconds=600) == 0
    await first.release_part(run, 0, holder="someone-else")  # not the holder: nothing happens
    assert await second.claim_part(run, holder="other", lease_seconds=600) is None
    await first.release_part(run, 0, holder="leaving")
    assert await second.claim_part(run, holder="other", lease_seconds=600) == 0


async def test_nothing_is_claimed_or_renewed_after_the_run_ended(
    stores: tuple[PostgresVectorStore, PostgresVectorStore],
) -> None:
    first, second = stores
    run = await _join(first, "op", parts=2)
    assert await first.claim_part(run, holder="w", lease_seconds=600) == 0
    assert await second.end_run(run, state="cancelled", record={})
    assert await first.claim_part(run, holder="w2", lease_seconds=600) is None
    assert not await first.renew_part(run, 0, holder="w", lease_seconds=600)
    assert not await first.complete_part(run, 0, holder="w", record={}, seen=b"")


async def test_a_completed_run_under_a_key_is_returned_instead_of_a_new_one(
    stores: tuple[PostgresVectorStore, PostgresVectorStore],
) -> None:
    """A deployment's startup run is not repeated once completed; a failed one is."""
    first, second = stores
    run = await _join(first, "first", key="deployment:v1")
    await first.end_run(run, state="failed", record={})
    retried = await _join(second, "retry", key="deployment:v1")
    assert retried.operation_id == "retry"
    await first.end_run(retried, state="completed", record={"progress": {"added_documents": 3}})
    again = await _join(second, "again", key="deployment:v1")
    assert (again.operation_id, again.state, again.result) == (
        "retry",
        "completed",
        {"progress": {"added_documents": 3}},
    )
    assert (await _join(second, "v2", key="deployment:v2")).operation_id == "v2"


async def test_joining_needs_the_index(options: PostgresStoreOptions) -> None:
    async with PostgresVectorStore(options) as store:
        with pytest.raises(VectorIndexNotFoundError):
            await store.join_run("missing", operation_id="op", reason="manual", parts=2)


async def test_a_whole_shared_run_behind_pgbouncer_in_transaction_mode(bounced_options: PostgresStoreOptions) -> None:
    """Claims keep no session state: joins, claims, leases and the end work through transaction pooling."""
    first, second = PostgresVectorStore(bounced_options), PostgresVectorStore(bounced_options)
    await first.open()
    await second.open()
    try:
        await first.ensure_index(SPEC)
        runs = await asyncio.gather(_join(first, "a", parts=2), _join(second, "b", parts=2))
        assert runs[0].operation_id == runs[1].operation_id
        run = runs[0]
        parts = await asyncio.gather(
            first.claim_part(run, holder="w1", lease_seconds=60), second.claim_part(run, holder="w2", lease_seconds=60)
        )
        assert sorted(parts) == [0, 1]  # type: ignore[type-var]
        for store, holder, part in ((first, "w1", parts[0]), (second, "w2", parts[1])):
            assert part is not None
            assert await store.renew_part(run, part, holder=holder, lease_seconds=60)
            assert await store.complete_part(run, part, holder=holder, record={"part": part}, seen=b"")
        assert await second.claim_part(run, holder="w2", lease_seconds=60) == run.finish_part
        assert len(await first.part_results(run)) == 2
        assert await second.end_run(run, state="completed", record={})
        assert (await first.refresh_run(run)).state == "completed"
    finally:
        await first.close()
        await second.close()
