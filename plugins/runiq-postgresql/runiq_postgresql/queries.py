"""Parameterised SQL, built once per logical index.

Only identifiers are interpolated: the validated, quoted schema name and the chunk table name that
derives from an integer ``index_id``. Every value (index names, document ids, content, metadata
filters, vectors, query terms) is a bound parameter.

Each search statement comes twice: as text for unfiltered queries, and as a
:class:`FilteredStatement` with a slot for a metadata filter compiled by ``filter_sql`` (whose keys
and values are parameters too, numbered after the statement's own). A filtered statement's text
depends only on the filter's *shape* (its operators, nesting and operand kinds), so asyncpg's
statement cache (``statement_cache_size``, least recently used first out) prepares each shape once
per connection, beside the unfiltered statements.

Free-text BM25 reads the query terms' blocks from the postings table and sums them in the store
(``postings``, ``ranking``). Phrase queries are scored in SQL with the same formula (k1 = 1.5,
b = 0.75, ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``): candidates are the phrase matches from the
GIN index on ``lexemes``, ``N`` and the average length come from the ``indexes`` row, ``df`` from
the postings blocks' sizes (:data:`DOCUMENT_FREQUENCY`) and each candidate's term frequency from its own
tsvector (``setweight(..., 'A', terms)`` then ``ts_filter(..., '{a}')`` cut it to the query terms in C
before it is unnested).
"""

from __future__ import annotations

from dataclasses import dataclass

from runiq.rag.providers import DistanceMetric, FilterNode
from runiq_postgresql.filter_sql import compile_filter
from runiq_postgresql.ranking import BM25_B, BM25_K1
from runiq_postgresql.rows import row_columns
from runiq_postgresql.schema import (
    TRIGRAM_EXPRESSION,
    ann_expression,
    ann_query_operand,
    chunk_table_name,
    distance_operator,
    postings_table_name,
    quote_ident,
)

__all__ = ["DOCUMENT_FREQUENCY", "MERGE_FAN_IN", "MERGED_BLOCK_POSTINGS", "FilteredStatement", "IndexSql", "SchemaSql"]

# Postings blocks of one lexeme are merged this many at a time, each merge taking blocks of one size
# class (sizes within a factor of MERGE_FAN_IN): every posting is rewritten about log4(n) times, and a
# lexeme keeps at most MERGE_FAN_IN - 1 blocks per size class. Blocks this large are left alone.
MERGE_FAN_IN = 4
MERGED_BLOCK_POSTINGS = 1 << 15
# A lexeme is rewritten without its deleted postings once its tombstones are a quarter of its postings.
_PURGE_RATIO = 4
# A lexeme's document frequency over its blocks: its live postings less its tombstones. Exact: a chunk's
# deletion tombstones each of its lexemes once, row ids are never reused, and a purge removes a posting
# with its tombstone. Only the blocks' ``size`` is read (an inline column), never their postings.
DOCUMENT_FREQUENCY = "sum(CASE WHEN dead THEN -size ELSE size END)"
# Which writes of an index a snapshot sees: every write transaction updates the index's row last
# (``update_stats``), and writes of one index commit one after another (that row's lock), so a row
# version, named by its ``xmin``, stands for one state of the index's chunks, postings and statistics.
# Statements in different snapshots that see the same version read the same data
# (``lexical_reads.LexicalReader._free_text_rows``).
# A false "same" needs the row left alone for 2^32 transactions and then a writer with its exact xid.
_INDEX_VERSION = "xmin::text::int8"
# Where a statement builder puts the filter condition; NUL never occurs in SQL text otherwise.
_SLOT = "\x00filter\x00"


@dataclass(frozen=True, slots=True)
class FilteredStatement:
    """A search statement with a slot for one compiled metadata filter over ``column``.

    The statement's own parameters are ``$1`` to ``$arity``; the filter's keys and values follow.
    """

    head: str
    tail: str
    column: str
    arity: int

    @classmethod
    def split(cls, sql: str, *, column: str, arity: int) -> FilteredStatement:
        head, tail = sql.split(_SLOT)
        return cls(head, tail, column, arity)

    def bind(self, node: FilterNode) -> tuple[str, tuple[object, ...]]:
        """The statement for ``node`` and the filter's parameters (passed after the statement's own)."""
        compiled = compile_filter(node, column=self.column, first_parameter=self.arity + 1)
        return self.head + compiled.sql + self.tail, compiled.parameters


@dataclass(frozen=True, slots=True)
class SchemaSql:
    """Statements on the shared tables of one schema."""

    get_index: str
    insert_index: str
    upsert_documents: str
    lock_documents: str
    delete_documents: str
    document_hashes: str
    document_hashes_of: str
    document_stamps_of: str
    update_stamps: str
    document_id_page: str
    document_count: str
    update_stats: str
    mark_ann: str
    drop_index: str
    chunk_count: str

    @classmethod
    def build(cls, schema: str) -> SchemaSql:
        s = quote_ident(schema)
        return cls(
            get_index=(
                f"SELECT index_id, embedding_model, dimension, metric, ann_index, analyzer "
                f"FROM {s}.indexes WHERE name = $1"
            ),
            insert_index=(
                f"INSERT INTO {s}.indexes (name, embedding_model, dimension, metric, analyzer) "
                "VALUES ($1, $2, $3, $4, $5) "
                "ON CONFLICT (name) DO NOTHING RETURNING index_id"
            ),
            upsert_documents=(
                f"INSERT INTO {s}.documents (index_id, document_id, content_hash, title, metadata, chunk_count, "
                "source_stamp) "
                "SELECT $1, d.id, d.hash, d.title, d.metadata::jsonb, d.chunks, d.stamp FROM unnest($2::text[], "
                "$3::text[], $4::text[], $5::text[], $6::int4[], $7::text[]) "
                "AS d(id, hash, title, metadata, chunks, stamp) ORDER BY d.id "
                "ON CONFLICT (index_id, document_id) DO UPDATE SET content_hash = excluded.content_hash, "
                "title = excluded.title, metadata = excluded.metadata, chunk_count = excluded.chunk_count, "
                "source_stamp = excluded.source_stamp, updated_at = now()"
            ),
            lock_documents=(
                f"SELECT document_id FROM {s}.documents WHERE index_id = $1 AND document_id = ANY($2::text[]) "
                "ORDER BY document_id FOR UPDATE"
            ),
            delete_documents=(
                f"DELETE FROM {s}.documents WHERE index_id = $1 AND document_id = ANY($2::text[]) RETURNING document_id"
            ),
            document_hashes=f"SELECT document_id, content_hash FROM {s}.documents WHERE index_id = $1",
            document_hashes_of=(
                f"SELECT document_id, content_hash FROM {s}.documents "
                "WHERE index_id = $1 AND document_id = ANY($2::text[])"
            ),
            document_stamps_of=(
                f"SELECT document_id, source_stamp FROM {s}.documents "
                "WHERE index_id = $1 AND document_id = ANY($2::text[]) AND source_stamp IS NOT NULL"
            ),
            # Rows locked by ``lock_documents`` first, in id order like every writer: no deadlock.
            update_stamps=(
                f"UPDATE {s}.documents AS doc SET source_stamp = d.stamp "
                "FROM unnest($2::text[], $3::text[]) AS d(id, stamp) WHERE doc.index_id = $1 AND doc.document_id = d.id"
            ),
            # In the column's own collation, which the primary key is ordered by: a page is an index-only
            # range scan (0.4 ms for 1,000 of 100,000 ids; ordering by COLLATE "C" sorted them all: 46 ms).
            # $2 is '' for the first page (it sorts before every id, which is never empty): a condition
            # with "$2 IS NULL OR" is no index bound in a generic plan, and each page scanned from the start.
            document_id_page=(
                f"SELECT document_id FROM {s}.documents WHERE index_id = $1 "
                "AND document_id > $2::text ORDER BY document_id LIMIT $3"
            ),
            document_count=f"SELECT count(*) FROM {s}.documents WHERE index_id = $1",
            # Document frequencies need no update: they are counted from the postings blocks.
            update_stats=(
                f"UPDATE {s}.indexes SET chunk_count = chunk_count + $2, total_terms = total_terms + $3, "
                "updated_at = now() WHERE index_id = $1 RETURNING chunk_count"
            ),
            mark_ann=f"UPDATE {s}.indexes SET ann_index = true, updated_at = now() WHERE index_id = $1",
            drop_index=f"DELETE FROM {s}.indexes WHERE index_id = $1",
            chunk_count=f"SELECT chunk_count FROM {s}.indexes WHERE index_id = $1",
        )


@dataclass(frozen=True, slots=True)
class IndexSql:
    """Statements on one index's chunk table."""

    table: str  # quoted and schema-qualified
    schema_name: str  # unquoted, for COPY (asyncpg quotes them)
    table_name: str
    postings: str  # the postings table, quoted and schema-qualified
    postings_name: str  # unquoted, for COPY
    columns: tuple[str, ...]  # of a prepared row, in row order (rows.row_columns): what COPY writes
    reserve_rows: str
    delete_chunks: str
    search_exact: str
    search_exact_filtered: FilteredStatement | None
    search_ann: str | None
    search_ann_filtered: FilteredStatement | None
    substring: str
    substring_filtered: FilteredStatement
    phrase: str
    phrase_filtered: FilteredStatement
    read_blocks: str
    lock_blocks: str
    delete_blocks: str
    merge_blocks: str
    document_frequencies: str
    purge_due: str
    candidates: str
    candidates_filtered: FilteredStatement

    @classmethod
    def build(cls, schema: str, index_id: int, dimensions: int | None, metric: DistanceMetric) -> IndexSql:
        s = quote_ident(schema)
        t = f'{s}."{chunk_table_name(index_id)}"'
        p = f'{s}."{postings_table_name(index_id)}"'
        row = row_columns(bool(dimensions))
        exact = ann = exact_f = ann_f = None
        if dimensions:
            exact = _search_exact(t, metric, None)
            exact_f = FilteredStatement.split(_search_exact(t, metric, _SLOT), column="metadata", arity=2)
            if ann_expression(dimensions) is not None:
                ann = _search_ann(t, metric, dimensions, None)
                ann_f = FilteredStatement.split(_search_ann(t, metric, dimensions, _SLOT), column="metadata", arity=4)
        return cls(
            table=t,
            schema_name=schema,
            table_name=chunk_table_name(index_id),
            postings=p,
            postings_name=postings_table_name(index_id),
            columns=row,
            reserve_rows=(
                "SELECT coalesce(array_agg(nextval(q.seq)), '{}') FROM "
                f"(SELECT pg_get_serial_sequence('{t}', 'row_id')::regclass AS seq) q, generate_series(1, $1::int4)"
            ),
            delete_chunks=_delete_chunks(t, p),
            search_exact=exact or "",
            search_exact_filtered=exact_f,
            search_ann=ann,
            search_ann_filtered=ann_f,
            substring=_substring(t, None),
            substring_filtered=FilteredStatement.split(_substring(t, _SLOT), column="metadata", arity=2),
            phrase=_phrase_sql(t, s, p, None),
            phrase_filtered=FilteredStatement.split(_phrase_sql(t, s, p, _SLOT), column="c.metadata", arity=5),
            read_blocks=_read_blocks(s, p),
            lock_blocks=(
                f"SELECT block, term, dead, high, wide, rows, tfs, lengths FROM {p} "
                "WHERE term = ANY($1::text[]) ORDER BY term, block FOR UPDATE"
            ),
            delete_blocks=(
                f"DELETE FROM {p} p USING unnest($1::text[], $2::int8[]) AS d(term, block) "
                "WHERE p.term = d.term AND p.block = d.block"
            ),
            merge_blocks=_merge_blocks(p),
            document_frequencies=(
                f"SELECT term, {DOCUMENT_FREQUENCY}::int8 AS df FROM {p} GROUP BY term "
                f"HAVING {DOCUMENT_FREQUENCY} > 0 ORDER BY term"
            ),
            purge_due=(
                f"SELECT term FROM {p} WHERE term = ANY($1::text[]) GROUP BY term HAVING bool_or(dead) "
                f"AND {_PURGE_RATIO} * sum(size) FILTER (WHERE dead) >= coalesce(sum(size) FILTER (WHERE NOT dead), 0) "
                "ORDER BY term"
            ),
            candidates=_candidates(t, s, None),
            candidates_filtered=FilteredStatement.split(_candidates(t, s, _SLOT), column="c.metadata", arity=5),
        )


def _read_blocks(s: str, p: str) -> str:
    """$1 index_id, $2 terms, $3 ids of blocks the caller holds from the postings table whose oid is $4.

    One row per lexeme some chunk holds (``blocks`` set): the statistics, its ``df`` and the ids of all
    its blocks; then one row per block of the terms that the caller does not hold (``block`` set), with
    its columns. Held blocks' columns are never read from TOAST, never sent; a lexeme whose blocks are
    all held costs one small row."""
    held = "p.tableoid::int8 = $4 AND p.block = ANY($3::int8[])"
    return (
        # ``version``: see ``_INDEX_VERSION``.
        f"SELECT (SELECT chunk_count FROM {s}.indexes WHERE index_id = $1) AS chunks, "
        f"(SELECT total_terms FROM {s}.indexes WHERE index_id = $1) AS total, "
        f"(SELECT {_INDEX_VERSION} FROM {s}.indexes WHERE index_id = $1) AS version, "
        f"p.term, {DOCUMENT_FREQUENCY} AS df, min(p.tableoid::int8) AS relation, array_agg(p.block) AS blocks, "
        "NULL::int8 AS block, NULL::bool AS dead, NULL::int4 AS high, NULL::bool AS wide, NULL::bytea AS rows, "
        f"NULL::bytea AS tfs, NULL::bytea AS lengths FROM {p} p "
        f"WHERE p.term = ANY($2::text[]) GROUP BY p.term HAVING {DOCUMENT_FREQUENCY} > 0 "
        "UNION ALL "
        "SELECT NULL, NULL, NULL, p.term, NULL, NULL, NULL, p.block, p.dead, p.high, p.wide, p.rows, p.tfs, p.lengths "
        f"FROM {p} p WHERE p.term = ANY($2::text[]) AND NOT ({held})"
    )


def _delete_chunks(t: str, p: str) -> str:
    """$1 document ids: deletes their chunks, appends a tombstone block per lexeme, returns the BM25 deltas
    and the lexemes tombstoned."""
    return (
        f"WITH old AS (DELETE FROM {t} WHERE document_id = ANY($1::text[]) RETURNING row_id, lexemes, term_count), "
        "gone AS MATERIALIZED (SELECT u.term, old.row_id FROM old, unnest(tsvector_to_array(old.lexemes)) AS u(term)), "
        f"tombstones AS (INSERT INTO {p} (term, dead, high, wide, size, rows) "
        "SELECT term, true, (row_id >> 32)::int4, false, count(*)::int4, "
        "string_agg(substring(int8send(row_id) from 5), ''::bytea) FROM gone GROUP BY term, row_id >> 32) "
        "SELECT (SELECT count(*) FROM old) AS chunks, (SELECT coalesce(sum(term_count), 0) FROM old) AS terms, "
        "coalesce((SELECT array_agg(DISTINCT term ORDER BY term) FROM gone), '{}') AS lexemes"
    )


def _merge_blocks(p: str) -> str:
    """$1 lexemes: merge their blocks of one size class (and kind), MERGE_FAN_IN or more at a time; returns
    the lexeme of each merged block (only those can have completed the size class above)."""
    return f"""
WITH sized AS (
    SELECT block, term, dead, high, wide, tier,
           count(*) OVER (PARTITION BY term, dead, high, wide, tier) AS peers
    FROM (SELECT block, term, dead, high, wide,
                 floor(ln(size::float8) / ln({MERGE_FAN_IN}::float8))::int4 AS tier
          FROM {p} WHERE term = ANY($1::text[]) AND size < {MERGED_BLOCK_POSTINGS}) s
), merged AS (
    DELETE FROM {p} p USING sized
    WHERE sized.peers >= {MERGE_FAN_IN} AND p.term = sized.term AND p.block = sized.block
    RETURNING p.block, p.term, p.dead, p.high, p.wide, sized.tier, p.size, p.rows, p.tfs, p.lengths
)
INSERT INTO {p} (term, dead, high, wide, size, rows, tfs, lengths)
SELECT term, dead, high, wide, sum(size)::int4, string_agg(rows, ''::bytea ORDER BY block),
       string_agg(tfs, ''::bytea ORDER BY block), string_agg(lengths, ''::bytea ORDER BY block)
FROM merged GROUP BY term, dead, high, wide, tier
RETURNING term"""


def _candidates(t: str, s: str, condition: str | None) -> str:
    """$1 row ids, $2 their scores, $3 the scores rounded to nine decimals, $4 k, $5 index_id (then a
    filter's parameters): the best k of the chunks still there (and passing the filter), by rounded
    score then identity, with what a hit needs, each with the index's ``version``; one row of NULLs
    but the version when no chunk is left (none when the index is gone)."""
    extra = f" AND {condition}" if condition else ""
    return (
        f"SELECT i.version, b.* FROM (SELECT {_INDEX_VERSION} AS version FROM {s}.indexes WHERE index_id = $5) i "
        "LEFT JOIN LATERAL (SELECT c.row_id, c.document_id, c.chunk_id, c.content, c.metadata::text AS metadata, "
        "x.score, x.rounded FROM unnest($1::int8[], $2::float8[], $3::float8[]) AS x(row_id, score, rounded) "
        f"JOIN {t} c ON c.row_id = x.row_id{extra} "
        "ORDER BY x.rounded DESC, c.document_id, c.chunk_id LIMIT $4) b ON true "
        "ORDER BY b.rounded DESC, b.document_id, b.chunk_id"
    )


def _where(condition: str | None) -> str:
    return f"WHERE {condition} " if condition else ""


def _search_exact(t: str, metric: DistanceMetric, condition: str | None) -> str:
    """$1 query vector, $2 k (then a filter's parameters)."""
    op = distance_operator(metric)
    return (
        f"SELECT document_id, chunk_id, content, metadata::text AS metadata, (embedding {op} $1::vector) AS distance "
        f"FROM {t} {_where(condition)}ORDER BY distance, document_id, chunk_id LIMIT $2"
    )


def _search_ann(t: str, metric: DistanceMetric, dimensions: int, condition: str | None) -> str:
    """$1 query vector, $2 k, $3 candidates, $4 ``hnsw.ef_search`` (then a filter's parameters)."""
    op = distance_operator(metric)
    expression, operand = ann_expression(dimensions), ann_query_operand(dimensions)
    # The inner query is the one HNSW can serve (ORDER BY the indexed distance alone); the outer one
    # recomputes the exact distance at full precision and breaks ties by identity.
    return (
        f"WITH candidates AS MATERIALIZED (SELECT row_id FROM {t} {_where(condition)}"
        f"ORDER BY {expression} {op} {operand} LIMIT $3) "
        f"SELECT c.document_id, c.chunk_id, c.content, c.metadata::text AS metadata, "
        f"(c.embedding {op} $1::vector) AS distance FROM candidates JOIN {t} c USING (row_id) "
        f"WHERE {_hnsw_settings(filtered=condition is not None)} IS NOT NULL "
        "ORDER BY distance, c.document_id, c.chunk_id LIMIT $2"
    )


def _hnsw_settings(*, filtered: bool) -> str:
    """The HNSW search's settings ($4 ``hnsw.ef_search``), as an uncorrelated subquery its result is gated on.

    The planner runs it once, as an init plan, before any row of the join below the gate is read, so
    the settings are in force before any HNSW scan in the statement walks the graph (pgvector reads
    them at a scan's first tuple). ``set_config(..., true)`` is local to the transaction, here the
    statement's own implicit one: nothing outlives the statement, so it works the same behind a
    transaction-pooling PgBouncer, in one round trip. A filtered scan keeps walking the graph until
    enough rows pass the filter (``hnsw.iterative_scan``).
    """
    settings = "set_config('hnsw.ef_search', $4::int4::text, true)"
    if filtered:
        settings += " || set_config('hnsw.iterative_scan', 'relaxed_order', true)"
    return f"(SELECT {settings})"


def _substring(t: str, condition: str | None) -> str:
    """$1 LIKE pattern, $2 limit (then a filter's parameters)."""
    extra = f" AND {condition}" if condition else ""
    return (
        f"SELECT document_id, chunk_id, content, metadata::text AS metadata, 0.0::float8 AS score FROM {t} "
        f"WHERE {TRIGRAM_EXPRESSION} LIKE $1 ESCAPE '\\'{extra} ORDER BY document_id, chunk_id LIMIT $2"
    )


def _phrase_sql(t: str, s: str, p: str, condition: str | None) -> str:
    """$1 index_id, $2 terms, $3 query term frequencies, $4 phrase tsquery, $5 limit (then a filter's
    parameters).

    The candidates are the phrase matches, kept even when no free term scores. Scores equal to nine
    decimals are ties (summation order can differ in the last bit), broken by ``(document_id,
    chunk_id)`` like every other ranking in runiq.
    """
    where = f" AND {condition}" if condition else ""
    join = "LEFT JOIN"
    return f"""
WITH stats AS (
    SELECT chunk_count::float8 AS n,
           CASE WHEN chunk_count > 0 AND total_terms > 0 THEN total_terms::float8 / chunk_count ELSE 1.0 END AS avgdl
    FROM {s}.indexes WHERE index_id = $1
), q AS MATERIALIZED (
    -- One primary-key range per query term (a scalar subquery: never a scan of the vocabulary).
    SELECT f.term, ln(1.0 + (stats.n - f.df + 0.5) / (f.df + 0.5)) * f.qtf AS weight
    FROM (
        SELECT qt.term, qt.qtf,
               (SELECT {DOCUMENT_FREQUENCY} FROM {p} p WHERE p.term = qt.term) AS df
        FROM unnest($2::text[], $3::int4[]) AS qt(term, qtf)
    ) f CROSS JOIN stats
    WHERE f.df > 0
), candidates AS (
    SELECT c.row_id, c.document_id, c.chunk_id, c.term_count, c.lexemes FROM {t} c
    WHERE c.lexemes @@ $4::text::tsquery{where}
), scored AS (
    SELECT m.row_id, m.document_id, m.chunk_id,
           coalesce(sum(q.weight * tf.n
                        / (tf.n + {BM25_K1} * (1.0 - {BM25_B} + {BM25_B} * m.term_count / stats.avgdl))), 0.0) AS score
    FROM candidates m CROSS JOIN stats
    {join} LATERAL (
        SELECT u.lexeme, cardinality(u.positions) AS n
        FROM unnest(ts_filter(setweight(m.lexemes, 'A', $2::text[]), '{{a}}')) AS u
    ) tf ON true
    {join} q ON q.term = tf.lexeme
    GROUP BY m.row_id, m.document_id, m.chunk_id
), top AS MATERIALIZED (
    -- The top k by identity too, before any content is read: only k rows are joined back.
    SELECT row_id, score FROM scored
    ORDER BY round(score::numeric, 9) DESC, document_id, chunk_id
    LIMIT $5
)
SELECT c.document_id, c.chunk_id, c.content, c.metadata::text AS metadata, top.score
FROM top JOIN {t} c ON c.row_id = top.row_id
ORDER BY round(top.score::numeric, 9) DESC, c.document_id, c.chunk_id"""
