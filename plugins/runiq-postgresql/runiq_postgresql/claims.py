"""Shared ingestion runs in PostgreSQL: the core's :class:`WorkClaims` capability.

``shared_runs`` has one row per run (at most one ``running`` per index: a partial unique index), and
``work_claims`` one row per part: the buckets ``0 .. parts - 1`` and the finish part ``parts``. A
worker claims the first part that is pending or whose lease has expired with ``FOR UPDATE SKIP
LOCKED``, so concurrent claimers never wait for each other and never get the same part; the finish
part qualifies only when every bucket is done. Leases are timestamps set from the server's clock
(``clock_timestamp()``), so workers on machines with skewed clocks agree on expiry; no transaction
stays open between calls, which suits PgBouncer's transaction pooling. Joining is serialised per index
by a transaction-scoped advisory lock, so simultaneous joiners find one run.

Records hold the core's counters and failure codes with document ids, never content; ``seen`` holds a
bucket's 8-byte id digests until the run ends. Runs beyond ``KEPT_PER_INDEX`` per index are pruned
(their claims with them) when a new one starts.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

import asyncpg

from runiq.errors import VectorIndexNotFoundError
from runiq.rag.providers import PartResult, SharedRun
from runiq_postgresql.errors import mapped
from runiq_postgresql.schema import quote_ident
from runiq_postgresql.settings import PostgresStoreOptions

__all__ = ["KEPT_PER_INDEX", "ClaimSql", "WorkClaimsMixin"]

KEPT_PER_INDEX = 100
_RUN_COLUMNS = "r.operation_id, r.reason, r.state, r.parts, r.started_at, r.completed_at, r.result::text AS result"
_REUSABLE = ("completed", "partially_completed")  # a deployment's startup run in these states is not repeated


class ClaimSql:
    """The statements of one schema. ``$1`` is always the index name, ``$2`` the run's operation id."""

    def __init__(self, schema: str) -> None:
        s = quote_ident(schema)
        self.schema = schema
        index = f"(SELECT index_id FROM {s}.indexes WHERE name = $1)"
        this_run = f"r.index_id = {index} AND r.operation_id = $2"
        held = "w.index_id = r.index_id AND w.operation_id = r.operation_id AND w.part = $3 AND w.holder = $4"
        self.index_id = f"SELECT index_id FROM {s}.indexes WHERE name = $1"
        self.running = f"SELECT {_RUN_COLUMNS} FROM {s}.shared_runs r WHERE r.index_id = $1 AND r.state = 'running'"
        self.keyed = (
            f"SELECT {_RUN_COLUMNS} FROM {s}.shared_runs r WHERE r.index_id = $1 AND r.run_key = $2 "
            "AND r.state = ANY($3::text[]) ORDER BY r.started_at DESC LIMIT 1"
        )
        self.insert_run = (
            f"INSERT INTO {s}.shared_runs AS r (index_id, operation_id, run_key, reason, state, parts) "
            f"VALUES ($1, $2, $3, $4, 'running', $5) RETURNING {_RUN_COLUMNS}"
        )
        self.insert_parts = (
            f"INSERT INTO {s}.work_claims (index_id, operation_id, part, state) "
            "SELECT $1, $2, g, 'pending' FROM generate_series(0, $3) AS g"
        )
        self.prune = (
            f"DELETE FROM {s}.shared_runs WHERE index_id = $1 AND state <> 'running' AND operation_id NOT IN "
            f"(SELECT operation_id FROM {s}.shared_runs WHERE index_id = $1 ORDER BY started_at DESC LIMIT $2)"
        )
        self.refresh = f"SELECT {_RUN_COLUMNS} FROM {s}.shared_runs r WHERE {this_run}"
        self.claim = (
            f"WITH run AS (SELECT r.index_id, r.operation_id, r.parts FROM {s}.shared_runs r "
            f"WHERE {this_run} AND r.state = 'running'), "
            f"candidate AS (SELECT c.part, c.state FROM {s}.work_claims c "
            "JOIN run ON c.index_id = run.index_id AND c.operation_id = run.operation_id "
            "WHERE (c.state = 'pending' OR (c.state = 'held' AND c.lease_until < clock_timestamp())) "
            f"AND (c.part < run.parts OR NOT EXISTS (SELECT 1 FROM {s}.work_claims d "
            "WHERE d.index_id = run.index_id AND d.operation_id = run.operation_id "
            "AND d.part < run.parts AND d.state <> 'done')) "
            "ORDER BY c.part LIMIT 1 FOR UPDATE OF c SKIP LOCKED) "
            f"UPDATE {s}.work_claims w SET state = 'held', holder = $3, "
            "lease_until = clock_timestamp() + make_interval(secs => $4), "
            "takeovers = w.takeovers + CASE WHEN candidate.state = 'held' THEN 1 ELSE 0 END "
            "FROM candidate, run WHERE w.index_id = run.index_id AND w.operation_id = run.operation_id "
            "AND w.part = candidate.part RETURNING w.part"
        )
        self.renew = (
            f"UPDATE {s}.work_claims w SET lease_until = clock_timestamp() + make_interval(secs => $5) "
            f"FROM {s}.shared_runs r WHERE {this_run} AND r.state = 'running' AND {held} AND w.state = 'held' "
            "RETURNING w.part"
        )
        self.release = (
            f"UPDATE {s}.work_claims w SET state = 'pending', holder = NULL, lease_until = NULL "
            f"FROM {s}.shared_runs r WHERE {this_run} AND {held} AND w.state = 'held'"
        )
        self.complete = (
            f"UPDATE {s}.work_claims w SET state = 'done', lease_until = NULL, record = $5::text::jsonb, seen = $6 "
            f"FROM {s}.shared_runs r WHERE {this_run} AND r.state = 'running' AND {held} AND w.state = 'held' "
            "RETURNING w.part"
        )
        self.results = (
            f"SELECT w.part, w.record::text AS record, w.seen FROM {s}.work_claims w "
            f"JOIN {s}.shared_runs r ON w.index_id = r.index_id AND w.operation_id = r.operation_id "
            f"WHERE {this_run} AND w.part < r.parts AND w.state = 'done' ORDER BY w.part"
        )
        self.end = (
            f"UPDATE {s}.shared_runs r SET state = $3, completed_at = clock_timestamp(), result = $4::text::jsonb "
            f"WHERE {this_run} AND r.state = 'running' RETURNING r.index_id"
        )
        self.forget_seen = (
            f"UPDATE {s}.work_claims SET seen = NULL, lease_until = NULL WHERE index_id = $1 AND operation_id = $2"
        )


def _run(index_name: str, row: asyncpg.Record) -> SharedRun:
    return SharedRun(
        index_name=index_name,
        operation_id=row["operation_id"],
        reason=row["reason"],
        parts=row["parts"],
        state=row["state"],
        started_at=row["started_at"],
        completed_at=row["completed_at"],
        result=None if row["result"] is None else json.loads(row["result"]),
    )


class WorkClaimsMixin:
    """:class:`WorkClaims` for :class:`PostgresVectorStore`, which provides ``pool`` and ``options``."""

    @property
    def pool(self) -> asyncpg.Pool:
        raise NotImplementedError

    @property
    def options(self) -> PostgresStoreOptions:
        raise NotImplementedError

    @functools.cached_property
    def _claim_sql(self) -> ClaimSql:
        return ClaimSql(self.options.schema_name)

    @mapped
    async def join_run(
        self, index_name: str, *, operation_id: str, reason: str, parts: int, key: str | None = None
    ) -> SharedRun:
        sql = self._claim_sql
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", f"{sql.schema}\x1fshared-run\x1f{index_name}"
            )
            index_id = await conn.fetchval(sql.index_id, index_name)
            if index_id is None:
                raise VectorIndexNotFoundError(index_name)
            row = await conn.fetchrow(sql.running, index_id)
            if row is None and key is not None:
                row = await conn.fetchrow(sql.keyed, index_id, key, list(_REUSABLE))
            if row is None:
                row = await conn.fetchrow(sql.insert_run, index_id, operation_id, key, reason, int(parts))
                await conn.execute(sql.insert_parts, index_id, operation_id, int(parts))
                await conn.execute(sql.prune, index_id, KEPT_PER_INDEX)
        assert row is not None  # INSERT ... RETURNING returns the row
        return _run(index_name, row)

    @mapped
    async def refresh_run(self, run: SharedRun) -> SharedRun:
        async with self.pool.acquire() as conn:
            row = await conn.fetchrow(self._claim_sql.refresh, run.index_name, run.operation_id)
        if row is None:  # the index was dropped
            raise VectorIndexNotFoundError(run.index_name)
        return _run(run.index_name, row)

    @mapped
    async def claim_part(self, run: SharedRun, *, holder: str, lease_seconds: float) -> int | None:
        async with self.pool.acquire() as conn:
            part = await conn.fetchval(
                self._claim_sql.claim, run.index_name, run.operation_id, holder, float(lease_seconds)
            )
        return None if part is None else int(part)

    @mapped
    async def renew_part(self, run: SharedRun, part: int, *, holder: str, lease_seconds: float) -> bool:
        async with self.pool.acquire() as conn:
            renewed = await conn.fetchval(
                self._claim_sql.renew, run.index_name, run.operation_id, part, holder, float(lease_seconds)
            )
        return renewed is not None

    @mapped
    async def release_part(self, run: SharedRun, part: int, *, holder: str) -> None:
        async with self.pool.acquire() as conn:
            await conn.execute(self._claim_sql.release, run.index_name, run.operation_id, part, holder)

    @mapped
    async def complete_part(
        self, run: SharedRun, part: int, *, holder: str, record: Mapping[str, Any], seen: bytes
    ) -> bool:
        async with self.pool.acquire() as conn:
            done = await conn.fetchval(
                self._claim_sql.complete, run.index_name, run.operation_id, part, holder, json.dumps(record), seen
            )
        return done is not None

    @mapped
    async def part_results(self, run: SharedRun) -> Sequence[PartResult]:
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(self._claim_sql.results, run.index_name, run.operation_id)
        return [
            PartResult(part=row["part"], record=json.loads(row["record"]), seen=bytes(row["seen"] or b""))
            for row in rows
        ]

    @mapped
    async def end_run(self, run: SharedRun, *, state: str, record: Mapping[str, Any]) -> bool:
        sql = self._claim_sql
        async with self.pool.acquire() as conn, conn.transaction():
            index_id = await conn.fetchval(sql.end, run.index_name, run.operation_id, state, json.dumps(record))
            if index_id is not None:
                await conn.execute(sql.forget_seen, index_id, run.operation_id)
        return index_id is not None
