"""Postings upkeep at the end of a write: purge tombstoned postings, merge small blocks (see ``postings``).

Runs inside the write's transaction, after its chunks and postings are written (before its statistics), under a
transaction-scoped advisory lock per index: two upkeeps never rewrite the same blocks (a purge reads
blocks ``FOR UPDATE`` and replaces them; a merge deletes blocks and inserts their concatenation), and
appends by concurrent writers are new rows that neither touches.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from runiq_postgresql import bulk, postings
from runiq_postgresql.connection import Connection
from runiq_postgresql.queries import IndexSql

__all__ = ["maintain"]

_PURGE_TERMS_PER_READ = 512  # lexemes purged per round trip, bounding what a purge holds in memory


async def maintain(
    conn: Connection, sql: IndexSql, lock_key: str, written: Iterable[str], tombstoned: Iterable[str]
) -> None:
    """Purge the tombstoned lexemes whose tombstones reached a quarter of their postings, then merge the
    touched lexemes' blocks of one size class four at a time, until no class has four (each further
    round looks only at the lexemes the round before merged). A write with neither takes no lock."""
    dead = sorted(set(tombstoned))
    touched = sorted(set(written).union(dead))
    if not touched:
        return
    await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", lock_key)
    if dead:
        due = [row["term"] for row in await conn.fetch(sql.purge_due, dead)]
        for start in range(0, len(due), _PURGE_TERMS_PER_READ):
            await _purge(conn, sql, due[start : start + _PURGE_TERMS_PER_READ])
    while touched:  # a merge can complete the size class above it: look again at the lexemes that merged
        touched = sorted({row["term"] for row in await conn.fetch(sql.merge_blocks, touched)})


async def _purge(conn: Connection, sql: IndexSql, terms: list[str]) -> None:
    blocks = await conn.fetch(sql.lock_blocks, terms)
    fresh = await asyncio.to_thread(postings.purged, blocks)
    await conn.execute(sql.delete_blocks, [b["term"] for b in blocks], [b["block"] for b in blocks])
    await bulk.copy_blocks(conn, sql, fresh)
