"""The bulk write path: binary COPY into a session-local staging table, then one set-based merge.

Used for large writes (``replace_documents`` and any single document with at least
``bulk_copy_threshold`` chunks). Per document the semantics are those of ``replace_document``; the
whole batch commits or rolls back together. Document rows are upserted in id order so concurrent
bulk writers lock them in the same order and cannot deadlock.
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from runiq.rag.stores.base import IndexSpec
from runiq_postgresql.queries import IndexSql, SchemaSql
from runiq_postgresql.rows import PreparedDocument, row_columns

__all__ = ["STAGING_TABLE", "write"]

STAGING_TABLE = "runiq_chunk_staging"
# Session-local and emptied at every commit; plain ``vector`` so one table serves every dimension.
_STAGING_DDL = (
    f"CREATE TEMP TABLE IF NOT EXISTS {STAGING_TABLE} (document_id text, chunk_id text, ordinal integer, "
    "content text, start_offset integer, end_offset integer, metadata text, embedding vector, "
    "term_count integer, lexemes text) ON COMMIT DELETE ROWS"
)


def merge_sql(index_sql: IndexSql, with_vectors: bool) -> str:
    vector = "embedding, " if with_vectors else ""
    # Rows move out of the staging table, so one transaction can merge several slices.
    return (
        f"WITH staged AS (DELETE FROM {STAGING_TABLE} RETURNING *) "
        f"INSERT INTO {index_sql.table} ({', '.join(row_columns(with_vectors))}) "
        "SELECT document_id, chunk_id, ordinal, content, start_offset, end_offset, metadata::jsonb, "
        f"{vector}term_count, lexemes::tsvector FROM staged"
    )


async def write(
    conn: asyncpg.Connection,
    schema_sql: SchemaSql,
    index_sql: IndexSql,
    index_id: int,
    spec: IndexSpec,
    prepared: Sequence[PreparedDocument],
) -> asyncpg.Record | None:
    """Upsert the documents, delete their old chunks, COPY and merge the new ones; returns the old totals."""
    docs = sorted(prepared, key=lambda d: d.document.document_id)
    ids = [d.document.document_id for d in docs]
    await conn.execute(
        schema_sql.upsert_documents,
        index_id,
        ids,
        [d.document.content_hash for d in docs],
        [d.document.title for d in docs],
        [d.metadata for d in docs],
        [len(d.rows) for d in docs],
    )
    old = await conn.fetchrow(index_sql.delete_chunks, ids)
    records = [row for d in docs for row in d.rows]
    if records:
        with_vectors = spec.dimensions is not None
        await conn.execute(_STAGING_DDL)
        await conn.copy_records_to_table(STAGING_TABLE, records=records, columns=list(row_columns(with_vectors)))
        await conn.execute(merge_sql(index_sql, with_vectors))
    return old
