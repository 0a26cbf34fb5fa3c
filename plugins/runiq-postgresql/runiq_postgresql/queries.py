"""Parameterised SQL, built once per logical index.

Only identifiers are interpolated: the validated, quoted schema name and the chunk table name that
derives from an integer ``index_id``. Every value (index names, document ids, content, metadata
filters, vectors, query terms) is a bound parameter.

BM25 (k1 = 1.5, b = 0.75, ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, the in-memory formula) is
computed in SQL: candidates come from the GIN index on ``lexemes`` (an OR of the query terms, or the
phrase tsquery), ``N`` and the average length from the ``indexes`` row, ``df`` from ``term_stats``
and each candidate's term frequency from its own tsvector. ``setweight(..., 'A', terms)`` followed by
``ts_filter(..., '{a}')`` cuts a candidate's tsvector down to the query terms in C before it is
unnested, so scoring touches a handful of lexemes per candidate, not the whole vector.
"""

from __future__ import annotations

from dataclasses import dataclass

from runiq.rag.stores.base import DistanceMetric
from runiq_postgresql.rows import row_columns
from runiq_postgresql.schema import (
    TRIGRAM_EXPRESSION,
    ann_expression,
    ann_query_operand,
    chunk_table_name,
    distance_operator,
    quote_ident,
)

__all__ = ["BM25_B", "BM25_K1", "IndexSql", "SchemaSql"]

# Row values (rows.row_columns): metadata is JSON text, embedding and lexemes are binary (pool codecs).
_INSERT_CASTS = {"metadata": "::jsonb", "embedding": "::vector", "lexemes": "::tsvector"}

BM25_K1 = 1.5
BM25_B = 0.75


@dataclass(frozen=True, slots=True)
class SchemaSql:
    """Statements on the shared tables of one schema."""

    get_index: str
    insert_index: str
    upsert_document: str
    upsert_documents: str
    lock_documents: str
    delete_documents: str
    document_hashes: str
    document_hashes_of: str
    document_id_page: str
    update_stats: str
    term_frequencies: str
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
            upsert_document=(
                f"INSERT INTO {s}.documents (index_id, document_id, content_hash, title, metadata, chunk_count) "
                "VALUES ($1, $2, $3, $4, $5::text::jsonb, $6) ON CONFLICT (index_id, document_id) DO UPDATE SET "
                "content_hash = excluded.content_hash, title = excluded.title, metadata = excluded.metadata, "
                "chunk_count = excluded.chunk_count, updated_at = now()"
            ),
            upsert_documents=(
                f"INSERT INTO {s}.documents (index_id, document_id, content_hash, title, metadata, chunk_count) "
                "SELECT $1, d.id, d.hash, d.title, d.metadata::jsonb, d.chunks FROM unnest($2::text[], $3::text[], "
                "$4::text[], $5::text[], $6::int4[]) AS d(id, hash, title, metadata, chunks) ORDER BY d.id "
                "ON CONFLICT (index_id, document_id) DO UPDATE SET content_hash = excluded.content_hash, "
                "title = excluded.title, metadata = excluded.metadata, chunk_count = excluded.chunk_count, "
                "updated_at = now()"
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
            # Byte order of UTF-8 ("C") is code-point order, the order Python compares str in.
            document_id_page=(
                f"SELECT document_id FROM {s}.documents WHERE index_id = $1 "
                'AND ($2::text IS NULL OR document_id COLLATE "C" > $2::text) '
                'ORDER BY document_id COLLATE "C" LIMIT $3'
            ),
            # Term rows are upserted in term order (no deadlock between concurrent writers), then the
            # index row: the WHERE on ``up`` forces the CTE to finish first.
            update_stats=(
                f"WITH up AS (INSERT INTO {s}.term_stats (index_id, term, df) "
                "SELECT $1, d.term, d.delta FROM unnest($2::text[], $3::int8[]) AS d(term, delta) ORDER BY d.term "
                "ON CONFLICT (index_id, term) DO UPDATE SET df = term_stats.df + excluded.df RETURNING 1) "
                f"UPDATE {s}.indexes SET chunk_count = chunk_count + $4, total_terms = total_terms + $5, "
                "updated_at = now() WHERE index_id = $1 AND (SELECT count(*) FROM up) >= 0 "
                "RETURNING chunk_count"
            ),
            term_frequencies=(
                f"SELECT (SELECT chunk_count FROM {s}.indexes WHERE index_id = $1) AS chunks, "
                "coalesce(array_agg(term), '{}') AS terms, coalesce(array_agg(df), '{}') AS dfs "
                f"FROM {s}.term_stats WHERE index_id = $1 AND term = ANY($2::text[])"
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
    columns: tuple[str, ...]  # of a prepared row, in row order (rows.row_columns): COPY and insert_chunk
    insert_chunk: str
    delete_chunks: str
    search_exact: str
    search_exact_filtered: str
    search_ann: str | None
    search_ann_filtered: str | None
    substring: str
    substring_filtered: str
    lexical_variants: tuple[str, str, str, str]  # indexed by (filtered, phrases)

    def lexical(self, *, filtered: bool, phrases: bool) -> str:
        return self.lexical_variants[2 * filtered + phrases]

    @classmethod
    def build(cls, schema: str, index_id: int, dimensions: int | None, metric: DistanceMetric) -> IndexSql:
        s = quote_ident(schema)
        t = f'{s}."{chunk_table_name(index_id)}"'
        row = row_columns(bool(dimensions))
        values = ", ".join(f"${i}{_INSERT_CASTS.get(column, '')}" for i, column in enumerate(row, 1))
        exact = ann = exact_f = ann_f = None
        if dimensions:
            exact, exact_f = (_search_exact(t, metric, filtered=f) for f in (False, True))
            if ann_expression(dimensions) is not None:
                ann, ann_f = (_search_ann(t, metric, dimensions, filtered=f) for f in (False, True))
        return cls(
            table=t,
            schema_name=schema,
            table_name=chunk_table_name(index_id),
            columns=row,
            insert_chunk=(f"INSERT INTO {t} ({', '.join(row)}) VALUES ({values})"),
            delete_chunks=(
                f"WITH old AS (DELETE FROM {t} WHERE document_id = ANY($1::text[]) RETURNING lexemes, term_count), "
                "lex AS (SELECT t AS term, count(*) AS n FROM old, unnest(tsvector_to_array(old.lexemes)) AS t "
                "GROUP BY t) "
                "SELECT (SELECT count(*) FROM old) AS chunks, (SELECT coalesce(sum(term_count), 0) FROM old) AS terms, "
                "coalesce((SELECT array_agg(term ORDER BY term) FROM lex), '{}') AS lexemes, "
                "coalesce((SELECT array_agg(n ORDER BY term) FROM lex), '{}') AS counts"
            ),
            search_exact=exact or "",
            search_exact_filtered=exact_f or "",
            search_ann=ann,
            search_ann_filtered=ann_f,
            substring=_substring(t, filtered=False),
            substring_filtered=_substring(t, filtered=True),
            lexical_variants=(
                _lexical_sql(t, s, filtered=False, phrases=False),
                _lexical_sql(t, s, filtered=False, phrases=True),
                _lexical_sql(t, s, filtered=True, phrases=False),
                _lexical_sql(t, s, filtered=True, phrases=True),
            ),
        )


def _where(filtered: bool, param: int, alias: str = "") -> str:
    return f"WHERE {alias}metadata @> ${param}::text::jsonb" if filtered else ""


def _search_exact(t: str, metric: DistanceMetric, *, filtered: bool) -> str:
    op = distance_operator(metric)
    return (
        f"SELECT document_id, chunk_id, content, metadata::text AS metadata, (embedding {op} $1::vector) AS distance "
        f"FROM {t} {_where(filtered, 3)} ORDER BY distance, document_id, chunk_id LIMIT $2"
    )


def _search_ann(t: str, metric: DistanceMetric, dimensions: int, *, filtered: bool) -> str:
    op = distance_operator(metric)
    expression, operand = ann_expression(dimensions), ann_query_operand(dimensions)
    # The inner query is the one HNSW can serve (ORDER BY the indexed distance alone); the outer one
    # recomputes the exact distance at full precision and breaks ties by identity.
    return (
        f"WITH candidates AS MATERIALIZED (SELECT row_id FROM {t} {_where(filtered, 4)} "
        f"ORDER BY {expression} {op} {operand} LIMIT $3) "
        f"SELECT c.document_id, c.chunk_id, c.content, c.metadata::text AS metadata, "
        f"(c.embedding {op} $1::vector) AS distance FROM candidates JOIN {t} c USING (row_id) "
        "ORDER BY distance, c.document_id, c.chunk_id LIMIT $2"
    )


def _substring(t: str, *, filtered: bool) -> str:
    extra = " AND metadata @> $3::text::jsonb" if filtered else ""
    return (
        f"SELECT document_id, chunk_id, content, metadata::text AS metadata, 0.0::float8 AS score FROM {t} "
        f"WHERE {TRIGRAM_EXPRESSION} LIKE $1 ESCAPE '\\'{extra} ORDER BY document_id, chunk_id LIMIT $2"
    )


def _lexical_sql(t: str, s: str, *, filtered: bool, phrases: bool) -> str:
    """$1 index_id, $2 terms, $3 query term frequencies, $4 candidate tsquery, $5 limit, $6 filter.

    Scores equal to nine decimals are ties (summation order can differ in the last bit), broken by
    ``(document_id, chunk_id)`` like every other ranking in runiq.
    """
    where = " AND c.metadata @> $6::text::jsonb" if filtered else ""
    # With phrases the candidates are the phrase matches, kept even when no free term scores.
    join = "LEFT JOIN" if phrases else "JOIN"
    return f"""
WITH stats AS (
    SELECT chunk_count::float8 AS n,
           CASE WHEN chunk_count > 0 AND total_terms > 0 THEN total_terms::float8 / chunk_count ELSE 1.0 END AS avgdl
    FROM {s}.indexes WHERE index_id = $1
), q AS MATERIALIZED (
    -- One primary-key probe per query term (a scalar subquery: never a scan of the vocabulary).
    SELECT f.term, ln(1.0 + (stats.n - f.df + 0.5) / (f.df + 0.5)) * f.qtf AS weight
    FROM (
        SELECT qt.term, qt.qtf,
               (SELECT t.df FROM {s}.term_stats t WHERE t.index_id = $1 AND t.term = qt.term) AS df
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
