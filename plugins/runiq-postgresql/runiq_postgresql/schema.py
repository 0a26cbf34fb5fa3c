"""DDL and versioned migrations.

Layout (all inside the configured schema, default ``runiq``)::

    schema_version(version, description, applied_at)      one row per applied migration
    indexes(index_id, name, embedding_model, dimension, metric,
            chunk_count, total_terms, ann_index, analyzer, created_at, updated_at)
    documents(index_id, document_id, content_hash, title, metadata, chunk_count, created_at, updated_at,
              source_stamp)
    ingestion_runs(index_id, operation_id, reason, state, started_at, completed_at, counts)
    shared_runs(index_id, operation_id, run_key, reason, state, parts, started_at, completed_at, result)
    work_claims(index_id, operation_id, part, state, holder, lease_until, takeovers, record, seen)
    chunks_<index_id>(row_id, document_id, chunk_id, ordinal, content, start_offset, end_offset,
                      metadata, term_count, lexemes, identifiers, embedding vector(<dimension>))
    postings_<index_id>(block, term, dead, high, wide, size, rows, tfs, lengths)   see ``postings``

One chunk table per logical index: the embedding column has the index's exact dimension, the HNSW
index is a plain index on it with the metric's operator class, planner statistics describe one
corpus, and dropping an index is ``DROP TABLE``. Table names derive from the integer ``index_id``
(never from the user's index name, which is only ever a bound value).

Migrations run in one transaction under a transaction-scoped advisory lock, so concurrent
migrators serialise and the second finds nothing to do. Each migration is applied once and
recorded in ``schema_version``; statements are idempotent as well, so a half-created schema from
an older tool still converges.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from runiq.errors import VectorStoreError
from runiq.rag.providers import DistanceMetric
from runiq_postgresql.connection import Connection
from runiq_postgresql.errors import ExtensionMissingError
from runiq_postgresql.settings import validate_identifier

__all__ = [
    "LATEST_VERSION",
    "MIGRATIONS",
    "REQUIRED_EXTENSIONS",
    "ExtensionSchemas",
    "ann_index_ddl",
    "chunk_table_ddl",
    "chunk_table_name",
    "migrate",
    "postings_table_name",
    "quote_ident",
]

# pg_advisory_xact_lock key shared by every runiq migrator on a database ("runiq-pg" as ASCII).
MIGRATION_LOCK_KEY = 0x72756E69712D7067
REQUIRED_EXTENSIONS = ("vector", "pg_trgm")
HNSW_MAX_VECTOR_DIMENSIONS = 2000
# Chunk rows up to a page stay inline and uncompressed. With PostgreSQL's default (about 2 kB) a
# 384-d vector, 500 characters and their tsvector already exceed it, so every row paid a pglz
# compression of its content and a TOAST insert of its lexemes, and BM25 scoring detoasted them
# again per candidate: about 30% of a bulk load's server CPU. The price is space (2 rows per 8 kB
# page instead of 3-4 for such rows, about 1.45x the table size).
TOAST_TUPLE_TARGET = 8160
HNSW_MAX_HALFVEC_DIMENSIONS = 4000
# What the trigram index covers and the substring query compares: the chunk's identifier-like words
# (lexical.identifier_text, already lower-cased), or for rows written before schema version 4, which
# have none, the whole content as before.
TRIGRAM_EXPRESSION = "(coalesce(identifiers, lower(content)))"


def quote_ident(name: str) -> str:
    """Quote an identifier that has already passed :func:`validate_identifier` (or is ours)."""
    return '"' + validate_identifier(name) + '"'


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    description: str
    statements: tuple[str, ...]


def _v1(s: str) -> tuple[str, ...]:
    return (
        f"""CREATE TABLE IF NOT EXISTS {s}.indexes (
            index_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            name text NOT NULL UNIQUE,
            embedding_model text,
            dimension integer CHECK (dimension IS NULL OR dimension > 0),
            metric text NOT NULL CHECK (metric IN ('cosine', 'euclidean', 'dot_product')),
            chunk_count bigint NOT NULL DEFAULT 0,
            total_terms bigint NOT NULL DEFAULT 0,
            ann_index boolean NOT NULL DEFAULT false,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now())""",
        f"""CREATE TABLE IF NOT EXISTS {s}.documents (
            index_id bigint NOT NULL REFERENCES {s}.indexes (index_id) ON DELETE CASCADE,
            document_id text NOT NULL,
            content_hash text NOT NULL,
            title text,
            metadata jsonb NOT NULL DEFAULT '{{}}',
            chunk_count integer NOT NULL DEFAULT 0,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (index_id, document_id))""",
        f"""CREATE TABLE IF NOT EXISTS {s}.term_stats (
            index_id bigint NOT NULL REFERENCES {s}.indexes (index_id) ON DELETE CASCADE,
            term text NOT NULL,
            df bigint NOT NULL,
            PRIMARY KEY (index_id, term))""",
        f"""CREATE TABLE IF NOT EXISTS {s}.ingestion_runs (
            index_id bigint NOT NULL REFERENCES {s}.indexes (index_id) ON DELETE CASCADE,
            operation_id text NOT NULL,
            reason text,
            state text NOT NULL,
            started_at timestamptz NOT NULL,
            completed_at timestamptz,
            counts jsonb NOT NULL DEFAULT '{{}}',
            PRIMARY KEY (index_id, operation_id))""",
    )


def _v2(s: str) -> tuple[str, ...]:
    # Indexes created before v2 were analysed without stop words and with every term in the length.
    return (f"ALTER TABLE {s}.indexes ADD COLUMN IF NOT EXISTS analyzer text NOT NULL DEFAULT 'runiq-lexical-v0'",)


def _each_chunk_table(s: str, *statements: str) -> str:
    """A DO block running ``statements`` (PL/pgSQL string expressions) on every existing chunk table.

    In them, ``t`` is the table's quoted, schema-qualified name, ``n`` its bare name
    (``chunks_<index_id>``) and ``p`` the quoted name of the index's postings table; indexes whose
    chunk table does not exist (yet) are skipped.
    """
    body = "\n".join(f"                    EXECUTE {statement};" for statement in statements)
    return f"""DO $runiq$
        DECLARE
            r record;
            n text;
            t text;
            p text;
        BEGIN
            FOR r IN SELECT index_id FROM {s}.indexes LOOP
                n := 'chunks_' || r.index_id;
                t := '{s}.' || quote_ident(n);
                p := '{s}.' || quote_ident('postings_' || r.index_id);
                IF to_regclass(t) IS NOT NULL THEN
{body}
                END IF;
            END LOOP;
        END
        $runiq$"""


def _dynamic(template: str) -> str:
    """A PL/pgSQL string expression for ``template`` with ``{t}`` and ``{p}`` as the DO block's variables."""
    parts = template.replace("{t}", "\x00t\x00").replace("{p}", "\x00p\x00").split("\x00")
    return " || ".join(part if part in ("t", "p") else "'" + part.replace("'", "''") + "'" for part in parts if part)


def _v3(s: str) -> tuple[str, ...]:
    # Existing chunk tables get the new tables' storage parameter; their rows are rewritten only by updates.
    return (_each_chunk_table(s, f"'ALTER TABLE ' || t || ' SET (toast_tuple_target = {TOAST_TUPLE_TARGET})'"),)


def _v4(s: str) -> tuple[str, ...]:
    # Existing chunk tables get the identifiers column (NULL for their rows, which keep content
    # semantics) and their trigram index is rebuilt on the new expression. The rebuild reads the
    # whole table once, inside the migration's transaction: until it commits, searches of that
    # table and other stores opening the schema wait (a one-time pause at upgrade).
    return (
        _each_chunk_table(
            s,
            "'ALTER TABLE ' || t || ' ADD COLUMN IF NOT EXISTS identifiers text'",
            f"'DROP INDEX IF EXISTS {s}.' || quote_ident(n || '_trgm')",
            "'CREATE INDEX ' || quote_ident(n || '_trgm') || ' ON ' || t"
            f" || ' USING gin ({TRIGRAM_EXPRESSION} gin_trgm_ops)'",
        ),
    )


# The postings table (see ``postings``); ``{p}`` is its quoted, schema-qualified name. Blocks over
# ~2 kB are stored out of line uncompressed: they are fixed-width numbers that pglz barely shrinks,
# and reading them must not pay a decompression.
POSTINGS_DDL = (
    """CREATE TABLE IF NOT EXISTS {p} (
            block bigint GENERATED BY DEFAULT AS IDENTITY,
            term text NOT NULL,
            dead boolean NOT NULL,
            high integer NOT NULL,
            wide boolean NOT NULL,
            size integer NOT NULL,
            rows bytea NOT NULL,
            tfs bytea,
            lengths bytea,
            PRIMARY KEY (term, block))""",
    "ALTER TABLE {p} ALTER COLUMN rows SET STORAGE EXTERNAL, ALTER COLUMN tfs SET STORAGE EXTERNAL, "
    "ALTER COLUMN lengths SET STORAGE EXTERNAL",
)

# Every lexeme of every chunk as one block per (lexeme, high, wide), in the format ``postings`` writes.
_POSTINGS_BACKFILL = (
    "INSERT INTO {p} (term, dead, high, wide, size, rows, tfs, lengths) "
    "SELECT u.lexeme, false, (c.row_id >> 32)::int4, c.term_count > 65535, count(*)::int4, "
    "string_agg(substring(int8send(c.row_id) from 5), ''::bytea ORDER BY c.row_id), "
    "string_agg(substring(int2send((cardinality(u.positions) - 1)::int2) from 2), ''::bytea ORDER BY c.row_id), "
    "string_agg(CASE WHEN c.term_count > 65535 THEN int4send(c.term_count) "
    "ELSE substring(int4send(c.term_count) from 3) END, ''::bytea ORDER BY c.row_id) "
    "FROM {t} c, unnest(c.lexemes) AS u WHERE cardinality(u.positions) > 0 "
    "AND NOT EXISTS (SELECT 1 FROM {p}) "
    "GROUP BY u.lexeme, c.row_id >> 32, c.term_count > 65535"
)


def _v5(s: str) -> tuple[str, ...]:
    # Existing chunk tables get a postings table filled from their tsvectors (every lexeme, stop
    # words included, as the store writes them), and row ids the store assigns itself. The backfill
    # reads each table once, inside the migration's transaction (about 25 s per 100,000 chunks of
    # ~60 words on a 2-core VM): a one-time pause at upgrade, as for v4.
    return (
        _each_chunk_table(
            s,
            "'ALTER TABLE ' || t || ' ALTER COLUMN row_id SET GENERATED BY DEFAULT'",
            *(_dynamic(statement) for statement in POSTINGS_DDL),
            _dynamic(_POSTINGS_BACKFILL),
        ),
    )


def _v6(s: str) -> tuple[str, ...]:
    # Shared ingestion runs (``claims``): one row per run, one per part (the buckets and the finish).
    return (
        f"""CREATE TABLE IF NOT EXISTS {s}.shared_runs (
            index_id bigint NOT NULL REFERENCES {s}.indexes (index_id) ON DELETE CASCADE,
            operation_id text NOT NULL,
            run_key text,
            reason text NOT NULL,
            state text NOT NULL,
            parts integer NOT NULL CHECK (parts > 0),
            started_at timestamptz NOT NULL DEFAULT now(),
            completed_at timestamptz,
            result jsonb,
            PRIMARY KEY (index_id, operation_id))""",
        f"CREATE UNIQUE INDEX IF NOT EXISTS shared_runs_running ON {s}.shared_runs (index_id) WHERE state = 'running'",
        f"CREATE INDEX IF NOT EXISTS shared_runs_key ON {s}.shared_runs (index_id, run_key, started_at) "
        "WHERE run_key IS NOT NULL",
        f"""CREATE TABLE IF NOT EXISTS {s}.work_claims (
            index_id bigint NOT NULL,
            operation_id text NOT NULL,
            part integer NOT NULL CHECK (part >= 0),
            state text NOT NULL CHECK (state IN ('pending', 'held', 'done')),
            holder text,
            lease_until timestamptz,
            takeovers integer NOT NULL DEFAULT 0,
            record jsonb,
            seen bytea,
            PRIMARY KEY (index_id, operation_id, part),
            FOREIGN KEY (index_id, operation_id) REFERENCES {s}.shared_runs (index_id, operation_id)
                ON DELETE CASCADE)""",
    )


def _v7(s: str) -> tuple[str, ...]:
    # Change detection by stamps: what a document's source listed it with (a file's size and modification
    # time...), beside its content hash. Nullable, no default: adding it rewrites nothing.
    return (f"ALTER TABLE {s}.documents ADD COLUMN IF NOT EXISTS source_stamp text",)


def _v8(s: str) -> tuple[str, ...]:
    # Every write upserted a row per lexeme it touched; the postings blocks' sizes give the same counts.
    return (f"DROP TABLE IF EXISTS {s}.term_stats",)


def _migrations(s: str) -> tuple[Migration, ...]:
    return (
        Migration(1, "indexes, documents, term statistics, ingestion runs", _v1(s)),
        Migration(2, "lexical analyzer signature per index", _v2(s)),
        Migration(3, "chunk rows stored inline up to a page (toast_tuple_target)", _v3(s)),
        Migration(4, "trigram index over identifier-like words only", _v4(s)),
        Migration(5, "postings table per index for BM25 top-k; row ids assigned by the store", _v5(s)),
        Migration(6, "shared ingestion runs and their work claims", _v6(s)),
        Migration(7, "source stamp per document (change detection without reading)", _v7(s)),
        Migration(8, "document frequencies counted from the postings blocks: no term statistics table", _v8(s)),
    )


MIGRATIONS = _migrations
LATEST_VERSION = len(_migrations('"x"'))


@dataclass(frozen=True, slots=True)
class ExtensionSchemas:
    """Where ``vector`` and ``pg_trgm`` live; connections put these schemas on their search path."""

    vector: str
    trgm: str

    @property
    def search_path(self) -> str:
        schemas = dict.fromkeys([self.vector, self.trgm])
        return ", ".join('"' + name.replace('"', '""') + '"' for name in schemas)


async def _extension_schemas(conn: Connection) -> dict[str, str]:
    rows = await conn.fetch(
        "SELECT e.extname, n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
        "WHERE e.extname = ANY($1::text[])",
        list(REQUIRED_EXTENSIONS),
    )
    return {row["extname"]: row["nspname"] for row in rows}


async def ensure_extensions(conn: Connection, *, create: bool) -> ExtensionSchemas:
    found = await _extension_schemas(conn)
    for name in REQUIRED_EXTENSIONS:
        if name in found:
            continue
        if not create:
            raise ExtensionMissingError(name)
        try:
            async with conn.transaction():  # a savepoint: a refusal must not abort the migration
                await conn.execute(f'CREATE EXTENSION IF NOT EXISTS "{name}"')
        except asyncpg.PostgresError as exc:
            sqlstate = getattr(exc, "sqlstate", None)
        else:
            continue
        raise ExtensionMissingError(name, sqlstate if isinstance(sqlstate, str) else None)
    found = await _extension_schemas(conn)
    return ExtensionSchemas(vector=found["vector"], trgm=found["pg_trgm"])


async def migrate(conn: Connection, schema: str, *, create_extensions: bool) -> ExtensionSchemas:
    """Bring ``schema`` to :data:`LATEST_VERSION`; safe to run concurrently and repeatedly."""
    s = quote_ident(schema)
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK_KEY)
        extensions = await ensure_extensions(conn, create=create_extensions)
        exists = await conn.fetchval("SELECT 1 FROM pg_namespace WHERE nspname = $1", schema)
        if not exists:
            await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
        await conn.execute(
            f"""CREATE TABLE IF NOT EXISTS {s}.schema_version (
                version integer PRIMARY KEY,
                description text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now())"""
        )
        current = await conn.fetchval(f"SELECT coalesce(max(version), 0) FROM {s}.schema_version")
        if current > LATEST_VERSION:
            raise VectorStoreError(
                f"The PostgreSQL schema '{schema}' is at version {current}, newer than this runiq-postgresql "
                f"supports ({LATEST_VERSION}); upgrade the plugin."
            )
        for migration in MIGRATIONS(s):
            if migration.version <= current:
                continue
            for statement in migration.statements:
                await conn.execute(statement)
            await conn.execute(
                f"INSERT INTO {s}.schema_version (version, description) VALUES ($1, $2)",
                migration.version,
                migration.description,
            )
    return extensions


async def schema_version(conn: Connection, schema: str) -> int:
    s = quote_ident(schema)
    return int(await conn.fetchval(f"SELECT coalesce(max(version), 0) FROM {s}.schema_version"))


def chunk_table_name(index_id: int) -> str:
    return f"chunks_{int(index_id)}"


def postings_table_name(index_id: int) -> str:
    return f"postings_{int(index_id)}"


def chunk_table_ddl(schema: str, index_id: int, dimensions: int | None) -> tuple[str, ...]:
    s, table = quote_ident(schema), chunk_table_name(index_id)
    t = f'{s}."{table}"'
    p = f'{s}."{postings_table_name(index_id)}"'
    embedding = f",\n            embedding vector({int(dimensions)}) NOT NULL" if dimensions else ""
    statements = [
        f"""CREATE TABLE IF NOT EXISTS {t} (
            row_id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            document_id text NOT NULL,
            chunk_id text NOT NULL,
            ordinal integer NOT NULL,
            content text NOT NULL,
            start_offset integer NOT NULL,
            end_offset integer NOT NULL,
            metadata jsonb NOT NULL DEFAULT '{{}}',
            term_count integer NOT NULL,
            lexemes tsvector NOT NULL,
            identifiers text{embedding},
            UNIQUE (document_id, chunk_id)) WITH (toast_tuple_target = {TOAST_TUPLE_TARGET})""",
        *(statement.replace("{p}", p) for statement in POSTINGS_DDL),
        *secondary_index_ddl(schema, index_id),
    ]
    if dimensions:
        # Keep vectors inline where they fit: content and lexemes are moved to TOAST first.
        statements.append(f"ALTER TABLE {t} ALTER COLUMN embedding SET STORAGE MAIN")
    return tuple(statements)


def secondary_index_ddl(schema: str, index_id: int) -> tuple[str, ...]:
    s, table = quote_ident(schema), chunk_table_name(index_id)
    t = f'{s}."{table}"'
    return (
        f'CREATE INDEX IF NOT EXISTS "{table}_lexemes" ON {t} USING gin (lexemes)',
        f'CREATE INDEX IF NOT EXISTS "{table}_metadata" ON {t} USING gin (metadata jsonb_path_ops)',
        f'CREATE INDEX IF NOT EXISTS "{table}_trgm" ON {t} USING gin ({TRIGRAM_EXPRESSION} gin_trgm_ops)',
    )


def secondary_index_names(index_id: int) -> tuple[str, ...]:
    table = chunk_table_name(index_id)
    return (f"{table}_lexemes", f"{table}_metadata", f"{table}_trgm")


def ann_expression(dimensions: int) -> str | None:
    """The indexed expression for HNSW: the column itself, a halfvec cast above 2,000 dimensions, or none."""
    if dimensions <= HNSW_MAX_VECTOR_DIMENSIONS:
        return "embedding"
    if dimensions <= HNSW_MAX_HALFVEC_DIMENSIONS:
        return f"(embedding::halfvec({int(dimensions)}))"
    return None


def ann_query_operand(dimensions: int) -> str:
    return "$1::vector" if dimensions <= HNSW_MAX_VECTOR_DIMENSIONS else f"($1::vector)::halfvec({int(dimensions)})"


def distance_operator(metric: DistanceMetric) -> str:
    """Cosine vectors are stored unit-normalised, so cosine and dot product both use inner product."""
    return "<->" if metric is DistanceMetric.EUCLIDEAN else "<#>"


def ann_index_ddl(
    schema: str, index_id: int, dimensions: int, metric: DistanceMetric, *, m: int, ef_construction: int
) -> str | None:
    expression = ann_expression(dimensions)
    if expression is None:
        return None
    family = "vector" if expression == "embedding" else "halfvec"
    ops = f"{family}_l2_ops" if metric is DistanceMetric.EUCLIDEAN else f"{family}_ip_ops"
    s, table = quote_ident(schema), chunk_table_name(index_id)
    return (
        f'CREATE INDEX IF NOT EXISTS "{table}_hnsw" ON {s}."{table}" USING hnsw ({expression} {ops}) '
        f"WITH (m = {int(m)}, ef_construction = {int(ef_construction)})"
    )
