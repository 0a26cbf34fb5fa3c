"""Lexical reads: the best chunks of an index for an analysed query, from its postings and its chunk table.

Free-text queries read the query terms' postings and statistics, sum BM25 with numpy (``ranking``) and
fetch the best chunks by row id, as if in one snapshot (two statements without a transaction that
check they saw the same version of the index, else again in one transaction); the postings come
through the store's block cache (``blockcache``), so the server sends only the blocks it does not hold.
Phrase queries are scored in SQL. Identifier fragments that no token matched are found by a trigram
search (the safety net), appended with score 0.

The store validates the request, analyses the query (``lexical.query_terms``) and lends the
connection; :class:`LexicalReader` reads the rows and :func:`lexical_hit` turns each into a hit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from itertools import chain
from typing import Any, Protocol

from runiq.rag.providers import FilterNode, StoreHit, scoring
from runiq_postgresql import postings, ranking
from runiq_postgresql.blockcache import BlockCache
from runiq_postgresql.connection import Connection
from runiq_postgresql.lexical import QueryTerms
from runiq_postgresql.queries import IndexSql
from runiq_postgresql.statements import chunk_metadata, fetch, statement

__all__ = ["LexicalIndex", "LexicalReader", "lexical_hit"]

_THREAD_SCORE_POSTINGS = 8_000  # BM25 over more postings is summed in a worker thread


class LexicalIndex(Protocol):
    """What a lexical read needs of an index: its id and statements, and the oid of its postings table
    (the block cache's key), which a read records when it finds the table was created again."""

    @property
    def index_id(self) -> int: ...

    @property
    def sql(self) -> IndexSql: ...

    postings_oid: int


class LexicalReader:
    """A store's lexical reads, over the block cache the store keeps for them."""

    def __init__(self, blocks: BlockCache) -> None:
        self._blocks = blocks

    async def rows(
        self, conn: Connection, index: LexicalIndex, terms: QueryTerms, top_k: int, where: FilterNode | None
    ) -> list[Any]:
        """The best rows, BM25 first (when the query has terms to match), then the trigram safety net's
        while fewer than k were found; more than k may come back."""
        rows: list[Any] = []
        if terms.match:
            rows = await self._bm25_rows(conn, index, terms, top_k, where)
        if terms.substring is not None and len(rows) < top_k:
            rows += await self._substring_rows(conn, index, terms.substring, top_k, where, rows)
        return rows

    async def _bm25_rows(
        self, conn: Connection, index: LexicalIndex, terms: QueryTerms, top_k: int, where: FilterNode | None
    ) -> list[Any]:
        """The BM25 top k: phrase queries in SQL (one statement); free text from the postings, read
        without a transaction, and again in one repeatable-read snapshot when a write committed between
        its statements (``_free_text_rows``)."""
        if terms.has_phrases:
            args = (index.index_id, list(terms.terms), list(terms.frequencies), terms.match, top_k)
            return await fetch(conn, index.sql.phrase, index.sql.phrase_filtered, where, *args)
        rows = await self._free_text_rows(conn, index, terms, top_k, where)
        if rows is None:
            async with conn.transaction(isolation="repeatable_read", readonly=True):
                rows = await self._free_text_rows(conn, index, terms, top_k, where)
            assert rows is not None  # one snapshot sees one version of the index
        return rows

    async def _free_text_rows(
        self, conn: Connection, index: LexicalIndex, terms: QueryTerms, top_k: int, where: FilterNode | None
    ) -> list[Any] | None:
        """The free-text top k, or None when its statements saw different versions of the index.

        The postings and statistics (``read_blocks``) and the candidates' chunks (``candidates``) are
        read by separate statements, each in its own snapshot outside a transaction (on another server
        connection behind a transaction-pooling PgBouncer). Each returns the version of the index it saw
        (``queries._INDEX_VERSION``): when all are equal, they read the index as one snapshot would;
        when not, a write committed in between (a replaced document's old postings would point at
        chunks gone) and the caller reads again in one transaction. Two round trips instead of four."""
        rows, read = await self._read_postings(conn, index, terms)
        if not rows:
            return []
        chunks, total, version = int(rows[0]["chunks"]), int(rows[0]["total"]), rows[0]["version"]
        dfs = {row["term"]: int(row["df"]) for row in rows}
        first = top_k + 4 if where is None else 4 * top_k + 16
        if sum(len(p.rows) for p in read.values()) > _THREAD_SCORE_POSTINGS:
            batches = await asyncio.to_thread(_ranked, read, terms, dfs, (chunks, total), first)
        else:
            batches = _ranked(read, terms, dfs, (chunks, total), first)
        return await self._best_rows(conn, index, batches, top_k, where, version)

    async def _read_postings(
        self, conn: Connection, index: LexicalIndex, terms: QueryTerms
    ) -> tuple[list[Any], dict[str, postings.TermPostings]]:
        """The query terms' lexeme rows (one per lexeme some chunk holds, with the statistics and its
        block ids), and each term's postings (from the block cache where it holds them: the server
        sends only the blocks not held, one row each)."""
        relation = index.postings_oid
        held = self._blocks.held(relation, terms.terms)
        ids = [block for term in held.values() for block in term.blocks]
        rows = await conn.fetch(index.sql.read_blocks, index.index_id, list(terms.terms), ids, relation)
        lexemes: list[Any] = []
        fresh: dict[str, list[Any]] = {}
        for row in rows:
            if row["blocks"] is not None:
                lexemes.append(row)
            else:
                fresh.setdefault(row["term"], []).append(row)
        if lexemes and lexemes[0]["relation"] != relation:  # the table was created again: nothing was held
            index.postings_oid = relation = lexemes[0]["relation"]
            held = {}
        assemble = self._blocks.assemble
        read = {
            row["term"]: assemble(
                relation, row["term"], row["blocks"], fresh.get(row["term"], ()), held.get(row["term"])
            )
            for row in lexemes
        }
        return lexemes, read

    async def _best_rows(
        self,
        conn: Connection,
        index: LexicalIndex,
        batches: Iterator[ranking.Batch],
        top_k: int,
        where: FilterNode | None,
        version: int,
    ) -> list[Any] | None:
        """Hand candidates to the server best first, with the best k so far, until k results are settled;
        None as soon as a statement saw another ``version`` of the index than the postings were read in.

        The server orders each batch (rounded score, then identity) and keeps the best k that still
        exist and pass the filter: a tie group, however large, costs one sort there, not a transfer.
        """
        sql, filter_args = statement(index.sql.candidates, index.sql.candidates_filtered, where)
        best: list[Any] = []
        for batch in batches:
            if not batch.rows:
                break
            args = [
                [row["row_id"] for row in best] + batch.rows,
                [row["score"] for row in best] + batch.scores,
                [row["rounded"] for row in best] + batch.rounded,
                top_k,
                index.index_id,
            ]
            found = await conn.fetch(sql, *args, *filter_args)
            if not found or found[0]["version"] != version:  # no row: the index is gone
                return None
            best = [row for row in found if row["row_id"] is not None]  # one row of NULLs: no chunk left
            if sum(row["rounded"] >= batch.floor for row in best) >= top_k:
                break
        return best

    async def _substring_rows(
        self,
        conn: Connection,
        index: LexicalIndex,
        pattern: str,
        top_k: int,
        where: FilterNode | None,
        found: list[Any],
    ) -> list[Any]:
        """The trigram safety net: identifier fragments that no token matched, appended with score 0."""
        seen = {(row["document_id"], row["chunk_id"]) for row in found}
        limit = top_k + len(seen)
        extra = await fetch(conn, index.sql.substring, index.sql.substring_filtered, where, pattern, limit)
        return [row for row in extra if (row["document_id"], row["chunk_id"]) not in seen]


def _ranked(
    read: Mapping[str, postings.TermPostings],
    terms: QueryTerms,
    dfs: Mapping[str, int],
    statistics: tuple[int, int],
    first: int,
) -> Iterator[ranking.Batch]:
    """The candidates' batches, best first, the first one already cut (the costly part, off the loop).

    The terms some chunk holds are scored, in query order (the order scores are summed in)."""
    chunks, total = statistics
    # ``read`` holds exactly the lexemes some chunk holds (``read_blocks`` keeps those whose df > 0).
    frequencies = {t: qtf for t, qtf in zip(terms.terms, terms.frequencies, strict=True) if t in read}
    gathered = postings.gathered(read, list(frequencies))
    batches = ranking.ranked(gathered, frequencies, chunks, total, dfs, first)
    return chain([next(batches)], batches)


def lexical_hit(row: Any) -> StoreHit:
    return StoreHit(
        document_id=row["document_id"],
        chunk_id=row["chunk_id"],
        content=row["content"],
        metadata=chunk_metadata(row["metadata"]),
        raw_score=float(row["score"]),
        metric=scoring.LEXICAL_BM25,
        higher_is_better=True,
        relevance=None,
    )
