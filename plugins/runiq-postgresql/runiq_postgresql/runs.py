"""Finished ingestion operations in ``ingestion_runs``: the core's :class:`IngestionHistory` capability.

One row per operation: the identity columns plus ``counts`` (jsonb), which holds the core's
``operation_record``: counters, the failed documents' ids and codes (at most the core's reporting
limit), never content. Rows beyond ``KEPT_PER_INDEX`` per index are pruned when a new one is written.
"""

from __future__ import annotations

import json

from runiq.rag.providers import RagIngestionOperation, operation_from_record, operation_record
from runiq_postgresql.connection import Connection
from runiq_postgresql.schema import quote_ident

__all__ = ["KEPT_PER_INDEX", "RunSql"]

KEPT_PER_INDEX = 100


class RunSql:
    def __init__(self, schema: str) -> None:
        s = quote_ident(schema)
        self._insert = (
            f"INSERT INTO {s}.ingestion_runs "
            "(index_id, operation_id, reason, state, started_at, completed_at, counts) "
            f"SELECT index_id, $2, $3, $4, $5, $6, $7::text::jsonb FROM {s}.indexes WHERE name = $1 "
            "ON CONFLICT (index_id, operation_id) DO UPDATE SET state = excluded.state, "
            "completed_at = excluded.completed_at, counts = excluded.counts"
        )
        self._prune = (
            f"DELETE FROM {s}.ingestion_runs r USING {s}.indexes i WHERE i.name = $1 AND r.index_id = i.index_id "
            f"AND r.operation_id NOT IN (SELECT operation_id FROM {s}.ingestion_runs k WHERE k.index_id = i.index_id "
            "ORDER BY k.started_at DESC LIMIT $2)"
        )
        self._recent = (
            f"SELECT r.operation_id, r.reason, r.state, r.started_at, r.completed_at, r.counts::text AS counts "
            f"FROM {s}.ingestion_runs r JOIN {s}.indexes i ON i.index_id = r.index_id WHERE i.name = $1 "
            "ORDER BY r.started_at DESC, r.operation_id LIMIT $2"
        )

    async def record(self, conn: Connection, operation: RagIngestionOperation) -> None:
        async with conn.transaction():
            await conn.execute(
                self._insert,
                operation.index_name,
                operation.operation_id,
                operation.reason.value,
                operation.state.value,
                operation.started_at,
                operation.completed_at,
                json.dumps(operation_record(operation)),
            )
            await conn.execute(self._prune, operation.index_name, KEPT_PER_INDEX)

    async def recent(self, conn: Connection, index_name: str, limit: int) -> list[RagIngestionOperation]:
        rows = await conn.fetch(self._recent, index_name, limit)
        return [
            operation_from_record(
                operation_id=row["operation_id"],
                index_name=index_name,
                reason=row["reason"],
                state=row["state"],
                started_at=row["started_at"],
                completed_at=row["completed_at"],
                record=json.loads(row["counts"]),
            )
            for row in rows
        ]
