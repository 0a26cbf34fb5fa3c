"""``PostgresVectorStore``: the durable :class:`VectorStore` and :class:`LexicalSearch` over asyncpg.

Lifecycle: ``CREATED`` -> ``OPEN`` (``open()`` resolves the DSN, starting the embedded server when
there is none, migrates the schema and opens the shared pool) -> ``CLOSED`` (pool released,
embedded server left). A closed store cannot be reopened; build a new one.

Writes take one path, one transaction per call (``replace_document`` is a batch of one): rows, lexical
terms and postings blocks are prepared first, outside the transaction, with row ids the store reserves;
then the document rows are upserted in id order (their row locks serialise writers of the same
document), the old chunk sets deleted (leaving tombstones in the postings table) and the new ones
binary-COPYed, their postings COPYed as one block per lexeme, lexemes with many tombstones purged and
small blocks merged (``upkeep``), and last the BM25 statistics (chunk count, total length) adjusted by
the net difference (the index's row stays locked until commit, so as late as possible), so readers see
either the old or the new version of a document, never a mix. Document frequencies are counted from
the postings blocks themselves (``queries.DOCUMENT_FREQUENCY``): a write has none to maintain.

Lexical search validates the request and analyses the query here, and reads its rows through
``lexical_reads`` (BM25 from the postings, phrases in SQL, the trigram safety net).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass, field
from enum import StrEnum
from types import TracebackType
from typing import Any, NamedTuple, Self

import asyncpg
import numpy.typing as npt

from runiq.errors import RagConfigurationError, RagValidationError, VectorIndexNotFoundError
from runiq.logging import get_logger
from runiq.rag.providers import (
    DistanceMetric,
    FilterSpec,
    IndexSpec,
    LexicalQuery,
    RagChunk,
    RagIngestionOperation,
    StoredDocument,
    StoreHealth,
    StoreHit,
    analyse_query,
    chunk_indexed_text,
    ensure_compatible,
    parse_filter,
    scoring,
    validate_top_k,
)
from runiq_postgresql import bulk, postings, upkeep
from runiq_postgresql.blockcache import BlockCache
from runiq_postgresql.claims import WorkClaimsMixin
from runiq_postgresql.connection import Connection
from runiq_postgresql.embedded import acquire_embedded_server, release_embedded_server
from runiq_postgresql.errors import STORE_KIND, guarded, mapped
from runiq_postgresql.health import ReplicaHealth, probe
from runiq_postgresql.lease import advisory_lease
from runiq_postgresql.lexical import SliceTerms, query_terms, slice_terms
from runiq_postgresql.lexical_reads import LexicalReader, lexical_hit
from runiq_postgresql.pool import PoolSettings, acquire_pool, release_pool
from runiq_postgresql.postings import PostingsBuffer
from runiq_postgresql.queries import IndexSql, SchemaSql
from runiq_postgresql.replicas import ReadRouter, routed_read
from runiq_postgresql.rows import (
    PreparedDocument,
    add_row_ids,
    add_terms,
    prepare_many,
    query_vector,
    validate_name,
)
from runiq_postgresql.runs import RunSql
from runiq_postgresql.schema import (
    ann_expression,
    ann_index_ddl,
    chunk_table_ddl,
    migrate,
    quote_ident,
    secondary_index_ddl,
    secondary_index_names,
)
from runiq_postgresql.settings import PostgresStoreOptions
from runiq_postgresql.statements import chunk_metadata, fetch
from runiq_postgresql.tokenising import TokenisingWorker, WorkerUnavailable

__all__ = ["PostgresVectorStore"]

log = get_logger(__name__)

_MAX_EF_SEARCH = 1000
_METRIC_NAMES = {metric: scoring.metric_name(metric) for metric in DistanceMetric}
_Item = tuple[StoredDocument, Sequence[RagChunk], npt.ArrayLike | None]
_THREAD_PREPARE_CHUNKS = 32  # tokenising more chunks than this runs in a worker thread
_ANALYZED_COLUMNS = "(document_id, chunk_id, ordinal, metadata, term_count, lexemes)"
_PROCESS_TOKENISE_CHUNKS = 256  # writes this large are tokenised by the helper process (when enabled)
# Every write appends a block per lexeme; blocks are merged every fourth write of this store to the index,
# for the lexemes of those writes: one merge scan instead of four (the scan was 40% of a 100k-chunk
# load's database time), for at most three more small blocks per lexeme in between. A write that never
# comes (a crash) only leaves those blocks for the next merge that touches their lexemes.
_MERGE_EVERY = 4
_UNMERGED_TERMS = 200_000  # or sooner, when this many lexemes wait
_TRY_XACT_LOCK = "SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))"
_PRESENT_INDEXES = "SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND indexname = ANY($2::text[])"


class _Prepared(NamedTuple):
    """Rows of a run of documents (with their reserved row ids), the run's lexical terms (document
    frequencies, postings, lengths) and its postings blocks, all ready before the transaction."""

    documents: list[PreparedDocument]
    terms: SliceTerms
    blocks: postings.Blocks


def _document_id(item: _Item) -> str:
    return item[0].document_id


@dataclass(slots=True)
class _StatsDelta:
    """Net change of the BM25 statistics (chunk count, total length) of one write."""

    chunks: int = 0
    terms: int = 0

    @classmethod
    def of(cls, old: asyncpg.Record | None, new: _Prepared | None) -> _StatsDelta:
        """The new documents' statistics (``new``) minus those of the chunks they replace (``old``)."""
        stats = cls()
        if new is not None:
            for doc in new.documents:
                stats.chunks += len(doc.rows)
                stats.terms += doc.total_terms
        if old is not None:
            stats.chunks -= old["chunks"]
            stats.terms -= old["terms"]
        return stats


class StoreState(StrEnum):
    CREATED = "created"  # constructed; no connection, no server
    OPEN = "open"  # schema migrated, pool open: every operation is allowed
    CLOSED = "closed"  # pool released; the store cannot be reopened


@dataclass(slots=True)
class _Index:
    index_id: int
    spec: IndexSpec
    sql: IndexSql
    ann: bool
    loading: int = 0  # open bulk_load() contexts: secondary indexes are rebuilt when the last one exits
    postings_oid: int = 0  # the postings table's oid once a search has read it (block cache keys)
    writes: int = 0  # writes by this store since it opened the index
    unmerged: set[str] = field(default_factory=set)  # lexemes appended to since their last merge (see _MERGE_EVERY)


class PostgresVectorStore(WorkClaimsMixin):
    """Use as ``async with PostgresVectorStore(options) as store`` (the plugin's factory does this)."""

    def __init__(self, options: PostgresStoreOptions | None = None) -> None:
        self._options = options or PostgresStoreOptions()
        self._schema = self._options.schema_name
        self._lexical = self._options.lexical
        self._analyzer = self._lexical.analyzer()
        self._sql = SchemaSql.build(self._schema)
        self._runs = RunSql(self._schema)
        self._pool: asyncpg.Pool | None = None
        self._reads: ReadRouter | None = None
        self._embedded = False
        self._indexes: dict[str, _Index] = {}
        self._ann_building: set[int] = set()
        self._analyzed: dict[int, int] = {}
        self._worker = TokenisingWorker(self._lexical) if self._options.tokenising_process else None
        # Rows (and terms without the helper) are prepared in one thread of the store's own: the work holds
        # the GIL, and each thread of the default pool that built a write's rows kept its own malloc arena
        # at its peak, growing the ingesting process with the length of the run.
        self._preparing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="runiq-postgresql-prepare")
        self._lexical_reads = LexicalReader(BlockCache())
        self.state = StoreState.CREATED

    @property
    def store_kind(self) -> str:
        return STORE_KIND

    @property
    def options(self) -> PostgresStoreOptions:
        return self._options

    # -- lifecycle ---------------------------------------------------------------------------

    async def open(self) -> None:
        if self.state is not StoreState.CREATED:
            raise RuntimeError(f"A PostgreSQL store in state '{self.state.value}' cannot be opened; create a new one.")
        self.state = StoreState.OPEN  # close() now releases whatever open() got
        try:
            await guarded(self._open())
        except BaseException:
            await self.close()
            raise

    async def _open(self) -> None:
        options = self._options
        if options.dsn is None:
            dsn = await acquire_embedded_server(options.data_dir)
            self._embedded = True
        else:
            dsn = options.dsn.get_secret_value()
        conn = await asyncpg.connect(
            dsn, timeout=options.connect_timeout, statement_cache_size=options.statement_cache_size
        )
        try:
            extensions = await migrate(conn, self._schema, create_extensions=options.create_extensions)
        finally:
            await conn.close()
        settings = PoolSettings(
            min_size=options.pool_min_size,
            max_size=options.pool_max_size,
            connect_timeout=options.connect_timeout,
            command_timeout=options.command_timeout,
            statement_cache_size=options.statement_cache_size,
        )
        self._pool = await acquire_pool(dsn, extensions, settings)
        self._reads = await ReadRouter.open(
            self._pool,
            options,
            open_pool=lambda replica: acquire_pool(replica, extensions, settings),
            release_pool=release_pool,
        )
        log.info("postgresql.store_opened", schema=self._schema, embedded=self._embedded)

    async def close(self) -> None:
        if self.state is StoreState.CLOSED:
            return
        self.state = StoreState.CLOSED
        pool, self._pool = self._pool, None
        reads, self._reads = self._reads, None
        self._preparing.shutdown(wait=False)
        if self._worker is not None:
            await self._worker.close()
        if reads is not None:
            await reads.aclose()
        if pool is not None:
            await release_pool(pool)
        if self._embedded:
            self._embedded = False
            await release_embedded_server(self._options.data_dir)

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @mapped
    async def record_operation(self, operation: RagIngestionOperation) -> None:
        async with self.pool.acquire() as conn:
            await self._runs.record(conn, operation)

    @mapped
    async def recent_operations(self, index_name: str, *, limit: int) -> Sequence[RagIngestionOperation]:
        async with self.pool.acquire() as conn:
            return await self._runs.recent(conn, index_name, limit)

    async def health(self) -> StoreHealth:
        """Connects, checks the extensions and the schema version; never raises (see ``health.probe``)."""
        return await probe(self._pool if self.state is StoreState.OPEN else None, self._schema)

    async def replica_health(self) -> tuple[ReplicaHealth, ...]:
        """Probe each of ``read_dsns`` now: reachable, lag, serving reads (see ``replicas``); never raises."""
        return await self.read_router.refresh()

    @property
    def pool(self) -> asyncpg.Pool:
        if self.state is not StoreState.OPEN or self._pool is None:
            raise RuntimeError("The PostgreSQL store is not open.")
        return self._pool

    @property
    def read_router(self) -> ReadRouter:
        """Where searches and counts run: a replica in use, else the primary ``pool``."""
        if self.state is not StoreState.OPEN or self._reads is None:
            raise RuntimeError("The PostgreSQL store is not open.")
        return self._reads

    # -- indexes -----------------------------------------------------------------------------

    @mapped
    async def ensure_index(self, spec: IndexSpec) -> None:
        name = validate_name(spec.name, "index name")
        if spec.dimensions is not None and (isinstance(spec.dimensions, bool) or spec.dimensions <= 0):
            raise RagValidationError("Index dimensions must be a positive integer or None.")
        created = False
        async with self.pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(self._sql.get_index, name)
            if row is None:
                # Creators of the same index name serialise here; the loser sees the winner's row.
                await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", f"{self._schema}\x1f{name}")
                row = await conn.fetchrow(self._sql.get_index, name)
                if row is None:
                    row, created = await self._create_index(conn, spec), True
        if row["analyzer"] != self._lexical.signature:
            raise RagConfigurationError(
                f"PostgreSQL index '{name}' was built with a different lexical analyzer than this store's "
                "stopwords/stemmer options; use the same options, or drop the index and ingest again."
            )
        index = self._indexes.get(name)
        if index is None or index.index_id != row["index_id"]:
            index = self._remember(name, row)
        else:  # keep this store's state of the index (an open bulk load, unmerged lexemes)
            index.ann = index.ann or row["ann_index"]
        ensure_compatible(index.spec, spec)
        if not created:
            await self._restore_deferred(index)

    async def _create_index(self, conn: Connection, spec: IndexSpec) -> asyncpg.Record:
        index_id = await conn.fetchval(
            self._sql.insert_index,
            spec.name,
            spec.embedding_model,
            spec.dimensions,
            spec.metric.value,
            self._lexical.signature,
        )
        for statement in chunk_table_ddl(self._schema, index_id, spec.dimensions):
            await conn.execute(statement)
        if spec.dimensions and self._options.ann_min_rows == 0:
            await self._build_ann(conn, index_id, spec)
        log.info("postgresql.index_created", index=spec.name, dimensions=spec.dimensions, metric=spec.metric.value)
        row = await conn.fetchrow(self._sql.get_index, spec.name)
        assert row is not None
        return row

    def _remember(self, name: str, row: asyncpg.Record) -> _Index:
        spec = IndexSpec(
            name=name,
            dimensions=row["dimension"],
            metric=DistanceMetric(row["metric"]),
            embedding_model=row["embedding_model"],
        )
        index = _Index(
            index_id=row["index_id"],
            spec=spec,
            sql=IndexSql.build(self._schema, row["index_id"], spec.dimensions, spec.metric),
            ann=row["ann_index"],
        )
        self._indexes[name] = index
        return index

    async def _lookup(self, index_name: str) -> _Index | None:
        index = self._indexes.get(index_name)
        if index is not None:
            return index
        if not isinstance(index_name, str) or not index_name or "\x00" in index_name:
            return None
        async with self.pool.acquire() as conn:
            row = await conn.fetchrow(self._sql.get_index, index_name)
        return None if row is None else self._remember(index_name, row)

    async def _require(self, index_name: str) -> _Index:
        index = await self._lookup(index_name)
        if index is None:
            raise VectorIndexNotFoundError(index_name)
        return index

    @asynccontextmanager
    async def ingestion_lease(self, index_name: str) -> AsyncIterator[bool]:
        """An advisory lock per (schema, index): True while this process holds it (see ``lease``).

        Implements the core's ``IngestionCoordinator`` so ``scheduled(cron, coordinate=True)`` runs each
        tick in one instance. The lock lives in one open transaction for the whole run and is released
        when the block exits, or by the server when the connection dies with its process.
        """
        async with advisory_lease(self.pool, f"{self._schema}\x1fingestion\x1f{index_name}") as acquired:
            yield acquired

    @mapped
    async def drop_index(self, index_name: str) -> None:
        """Remove an index with all its documents and chunks (not part of the store protocol)."""
        index = await self._lookup(index_name)
        if index is None:
            return
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(f"DROP TABLE IF EXISTS {index.sql.table}, {index.sql.postings}")
            await conn.execute(self._sql.drop_index, index.index_id)
        self._indexes.pop(index_name, None)

    # -- writes ------------------------------------------------------------------------------

    @mapped
    async def replace_document(
        self,
        index_name: str,
        document: StoredDocument,
        chunks: Sequence[RagChunk],
        vectors: npt.ArrayLike | None,
    ) -> None:
        index = await self._require(index_name)
        await self._write(index, [(document, chunks, vectors)])

    @mapped
    async def replace_documents(
        self,
        index_name: str,
        items: Sequence[tuple[StoredDocument, Sequence[RagChunk], npt.ArrayLike | None]],
    ) -> None:
        """Replace many documents in one transaction (all or nothing; each document as ``replace_document``).

        Callers bound memory by passing batches (managed ingestion writes a few thousand chunks at a time).
        """
        if not items:
            return
        index = await self._require(index_name)
        ids = [validate_name(item[0].document_id, "document id") for item in items]
        if len(set(ids)) != len(ids):
            raise RagValidationError("Each document may appear only once in a bulk replace.")
        await self._write(index, items)

    @asynccontextmanager
    async def bulk_load(self, index_name: str) -> AsyncIterator[None]:
        """:class:`~runiq.rag.providers.BulkLoading`: secondary indexes are dropped now and rebuilt on exit.

        Inside the block, writes (of any caller) maintain no GIN entries (building the lexical, trigram
        and metadata indexes once afterwards is several times faster than maintaining them row by row),
        and this store builds the HNSW index once, after the last write, instead of at ``ann_min_rows``
        and then row by row. Searches during the load stay correct but scan the table. Managed
        ingestion uses it for a first load; it suits ingestion jobs, not a live, busy index.

        The load holds its lease (shared, in one open transaction) until the indexes are back, so no
        ``ensure_index`` elsewhere rebuilds them under it; a process killed inside the block loses the
        lease, and the next ``ensure_index`` of the index rebuilds what is missing.
        """
        index = await guarded(self._require(index_name))
        async with self._load_lease(index):
            index.loading += 1
            try:
                if index.loading == 1:
                    await guarded(self._drop_secondary(index))
                yield
            finally:
                index.loading -= 1
                if index.loading == 0:
                    await guarded(self._finish_load(index))

    def _load_key(self, index: _Index) -> str:
        return f"{self._schema}\x1fbulk_load\x1f{index.index_id}"

    def _load_lease(self, index: _Index) -> AbstractAsyncContextManager[object]:
        """The load's shared lease; none with a one-connection pool, which the lease would hold (then
        another store's ``ensure_index`` may rebuild the indexes during the load: slower, still correct)."""
        if self._options.pool_max_size < 2:
            return nullcontext()
        return advisory_lease(self.pool, self._load_key(index), shared=True)

    async def _restore_deferred(self, index: _Index) -> None:
        """What a killed bulk load left out (secondary indexes, then the HNSW index when due), rebuilt
        unless a load holds the index's lease (this store's or another process's)."""
        if index.loading:
            return
        names = list(secondary_index_names(index.index_id))
        async with self.pool.acquire() as conn:
            present = await conn.fetchval(_PRESENT_INDEXES, self._schema, names)
        if present == len(names):
            return
        async with self.pool.acquire() as conn, conn.transaction():
            if not await conn.fetchval(_TRY_XACT_LOCK, self._load_key(index)):
                return  # a load is running: it rebuilds them when it ends
            await conn.execute(f"SET LOCAL maintenance_work_mem = '{int(self._options.maintenance_work_mem_mb)}MB'")
            for statement in secondary_index_ddl(self._schema, index.index_id):
                await conn.execute(statement)
            total = int(await conn.fetchval(self._sql.chunk_count, index.index_id) or 0)
        log.warning("postgresql.secondary_indexes_restored", index=index.spec.name)
        await self._maybe_analyze(index, total)
        await self._maybe_build_ann(index, total)

    async def _drop_secondary(self, index: _Index) -> None:
        async with self.pool.acquire() as conn, conn.transaction():
            for name in secondary_index_names(index.index_id):
                await conn.execute(f'DROP INDEX IF EXISTS {quote_ident(self._schema)}."{name}"')

    async def _finish_load(self, index: _Index) -> None:
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(f"SET LOCAL maintenance_work_mem = '{int(self._options.maintenance_work_mem_mb)}MB'")
            for statement in secondary_index_ddl(self._schema, index.index_id):
                await conn.execute(statement)
            total = int(await conn.fetchval(self._sql.chunk_count, index.index_id) or 0)
        self._analyzed.pop(index.index_id, None)
        await self._maybe_analyze(index, max(total, 1000))
        await self._maybe_build_ann(index, total)

    async def _prepare(self, index: _Index, items: Sequence[_Item]) -> _Prepared:
        """Rows, lexical terms and postings blocks of the documents, before the write's transaction; more
        than a handful of chunks are prepared off the loop (rows and blocks in a thread, terms in the helper
        process or a thread) while their row ids are reserved."""
        contents = [chunk_indexed_text(chunk) for _, chunks, _ in items for chunk in chunks]
        if len(contents) <= _THREAD_PREPARE_CHUNKS:
            row_ids = await self._reserve_rows(index, len(contents))
            return _completed(prepare_many(index.spec, items), slice_terms(contents, self._analyzer), row_ids)
        loop = asyncio.get_running_loop()
        rows = asyncio.ensure_future(loop.run_in_executor(self._preparing, prepare_many, index.spec, items))
        terms = asyncio.ensure_future(self._terms(contents))
        ids = asyncio.ensure_future(self._reserve_rows(index, len(contents)))
        try:
            documents, computed, row_ids = await rows, await terms, await ids
        except BaseException as exc:
            # Let every part finish (an ordinary error keeps the helper, whose reply would otherwise be
            # lost), or cancel them when the write itself was cancelled.
            if isinstance(exc, asyncio.CancelledError):
                for part in (rows, terms, ids):
                    part.cancel()
            await asyncio.gather(rows, terms, ids, return_exceptions=True)
            raise
        return await loop.run_in_executor(self._preparing, _completed, documents, computed, row_ids)

    async def _terms(self, contents: list[str]) -> SliceTerms:
        if len(contents) >= _PROCESS_TOKENISE_CHUNKS:
            computed = await self._worker_terms(contents)
            if computed is not None:
                return computed
        return await asyncio.get_running_loop().run_in_executor(self._preparing, slice_terms, contents, self._analyzer)

    async def _worker_terms(self, contents: list[str]) -> SliceTerms | None:
        """Lexical terms from the tokenising process, or None (tokenise here) when it is off or gone."""
        worker = self._worker
        if worker is None or not worker.available:
            return None
        try:
            return await worker.slice_terms(contents)
        except WorkerUnavailable:
            return None

    async def _write(self, index: _Index, items: Sequence[_Item]) -> None:
        """The one write path: documents upserted in id order (one lock order across concurrent writers),
        their old chunks deleted, the new ones binary-COPYed, then postings, statistics and upkeep; one
        transaction. Tokenising happens before the transaction, so concurrent writes overlap it with
        each other's server time."""
        prepared = await self._prepare(index, sorted(items, key=_document_id))
        async with self.pool.acquire() as conn, conn.transaction():
            old = await bulk.replace_document_rows(conn, self._sql, index.sql, index.index_id, prepared.documents)
            await bulk.copy_chunks(conn, index.sql, prepared.documents)
            stats = _StatsDelta.of(old, prepared)
            total = await self._finish_write(conn, index, stats, prepared.blocks, _lexemes(old))
        if index.loading:
            return  # bulk_load() analyses and builds the ANN index once, at the end
        await self._maybe_analyze(index, total)
        await self._maybe_build_ann(index, total)

    async def _maybe_analyze(self, index: _Index, chunk_count: int) -> None:
        """Refresh planner statistics whenever bulk loads have doubled the table since the last time."""
        if chunk_count < 1000 or chunk_count < 2 * self._analyzed.get(index.index_id, 0):
            return
        self._analyzed[index.index_id] = chunk_count
        async with self.pool.acquire() as conn:
            # Not content or embedding: no plan uses their statistics (vectors are ordered by the HNSW
            # index or a sort, trigram LIKE estimates are generic), and sampling them is the slow part.
            await conn.execute(f"ANALYZE {index.sql.table} {_ANALYZED_COLUMNS}")
            await conn.execute(f"ANALYZE {index.sql.postings} (term, dead, size)")

    async def _reserve_rows(self, index: _Index, count: int) -> list[int]:
        """Row ids for ``count`` new chunks, taken from the chunk table's sequence before the write's
        transaction (the postings blocks refer to them, so they are encoded beforehand). A write that fails
        leaves a gap, as a rolled-back ``nextval`` always does; ids are never reused."""
        if count == 0:
            return []
        async with self.pool.acquire() as conn:
            return list(await conn.fetchval(index.sql.reserve_rows, count))

    async def _finish_write(
        self,
        conn: Connection,
        index: _Index,
        stats: _StatsDelta,
        blocks: postings.Blocks,
        tombstoned: Iterable[str],
    ) -> int:
        """The write's postings blocks, upkeep of the lexemes it touched, then the statistics; the new chunk count.

        The statistics come last: their rows (the index's, its terms') are locked until commit, and a
        concurrent writer's statistics wait for them, so no upkeep runs while they are held."""
        await bulk.copy_blocks(conn, index.sql, blocks)
        lock = f"{self._schema}\x1fpostings\x1f{index.index_id}"
        index.writes += 1
        index.unmerged.update(blocks.terms)
        merging: Iterable[str] = ()
        if index.writes % _MERGE_EVERY == 0 or len(index.unmerged) > _UNMERGED_TERMS:
            merging, index.unmerged = index.unmerged, set()
        await upkeep.maintain(conn, index.sql, lock, merging, tombstoned)
        return await self._apply_stats(conn, index, stats)

    async def _apply_stats(self, conn: Connection, index: _Index, stats: _StatsDelta) -> int:
        total = await conn.fetchval(self._sql.update_stats, index.index_id, stats.chunks, stats.terms)
        return int(total or 0)

    @mapped
    async def delete_documents(self, index_name: str, document_ids: Sequence[str]) -> int:
        index = await self._lookup(index_name)
        ids = sorted({d for d in document_ids if isinstance(d, str) and d and "\x00" not in d})
        if index is None or not ids:
            return 0
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.fetch(self._sql.lock_documents, index.index_id, ids)
            old = await conn.fetchrow(index.sql.delete_chunks, ids)
            deleted = await conn.fetch(self._sql.delete_documents, index.index_id, ids)
            await self._finish_write(conn, index, _StatsDelta.of(old, None), postings.Blocks(), _lexemes(old))
        return len(deleted)

    # -- approximate index -------------------------------------------------------------------

    async def _maybe_build_ann(self, index: _Index, chunk_count: int) -> None:
        spec = index.spec
        if (
            index.ann
            or not spec.dimensions
            or ann_expression(spec.dimensions) is None
            or chunk_count < self._options.ann_min_rows
            or index.index_id in self._ann_building
        ):
            return
        self._ann_building.add(index.index_id)
        try:
            async with self.pool.acquire() as conn, conn.transaction():
                key = f"{self._schema}\x1fann\x1f{index.index_id}"
                if await conn.fetchval(_TRY_XACT_LOCK, key):
                    await self._build_ann(conn, index.index_id, spec)
            index.ann = True
        finally:
            self._ann_building.discard(index.index_id)

    async def _build_ann(self, conn: Connection, index_id: int, spec: IndexSpec) -> None:
        assert spec.dimensions is not None
        ddl = ann_index_ddl(
            self._schema,
            index_id,
            spec.dimensions,
            spec.metric,
            m=self._options.hnsw_m,
            ef_construction=self._options.hnsw_ef_construction,
        )
        if ddl is None:
            return
        await conn.execute(f"SET LOCAL maintenance_work_mem = '{int(self._options.maintenance_work_mem_mb)}MB'")
        await conn.execute(ddl)
        await conn.execute(self._sql.mark_ann, index_id)
        log.info("postgresql.ann_index_built", index=spec.name, dimensions=spec.dimensions)

    # -- reads -------------------------------------------------------------------------------

    @mapped
    async def document_hashes(self, index_name: str, document_ids: Sequence[str] | None = None) -> Mapping[str, str]:
        index = await self._lookup(index_name)
        if index is None:
            return {}
        async with self.pool.acquire() as conn:
            if document_ids is None:
                rows = await conn.fetch(self._sql.document_hashes, index.index_id)
            else:
                rows = await conn.fetch(self._sql.document_hashes_of, index.index_id, list(document_ids))
        return {row["document_id"]: row["content_hash"] for row in rows}

    @mapped
    async def document_stamps(self, index_name: str, document_ids: Sequence[str]) -> Mapping[str, str]:
        """:class:`~runiq.rag.providers.DocumentStamps`: the stamps stored beside the content hashes."""
        index = await self._lookup(index_name)
        if index is None or not document_ids:
            return {}
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(self._sql.document_stamps_of, index.index_id, list(document_ids))
        return {row["document_id"]: row["source_stamp"] for row in rows}

    @mapped
    async def update_stamps(self, index_name: str, stamps: Mapping[str, str]) -> None:
        index = await self._lookup(index_name)
        if index is None or not stamps:
            return
        ids = sorted(stamps)
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.fetch(self._sql.lock_documents, index.index_id, ids)
            await conn.execute(self._sql.update_stamps, index.index_id, ids, [stamps[i] for i in ids])

    @mapped
    async def document_id_page(self, index_name: str, *, after: str | None, limit: int) -> Sequence[str]:
        index = await self._lookup(index_name)
        if index is None:
            return []
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(self._sql.document_id_page, index.index_id, after or "", limit)
        return [row["document_id"] for row in rows]

    @mapped
    @routed_read
    async def count(self, index_name: str) -> int:
        index = await self._lookup(index_name)
        if index is None:
            return 0
        async with self.read_router.connection() as conn:
            value = await conn.fetchval(self._sql.chunk_count, index.index_id)
        return int(value or 0)

    @mapped
    @routed_read
    async def document_count(self, index_name: str) -> int:
        index = await self._lookup(index_name)
        if index is None:
            return 0
        async with self.read_router.connection() as conn:
            return int(await conn.fetchval(self._sql.document_count, index.index_id))

    @mapped
    @routed_read
    async def search(
        self,
        index_name: str,
        vector: npt.ArrayLike,
        *,
        top_k: int,
        filters: FilterSpec | None = None,
    ) -> list[StoreHit]:
        index = await self._require(index_name)
        validate_top_k(top_k)
        encoded = query_vector(index.spec, vector)
        where = parse_filter(filters)
        sql = index.sql
        ef = min(_MAX_EF_SEARCH, max(self._options.hnsw_ef_search, 4 * top_k))
        candidates = min(ef, 2 * top_k + 10)
        async with self.read_router.connection() as conn:
            if index.ann and sql.search_ann is not None and 2 * top_k + 10 <= _MAX_EF_SEARCH:
                # One statement: its HNSW settings are local to it (queries._hnsw_settings).
                args = (encoded, top_k, candidates, ef)
                rows = await fetch(conn, sql.search_ann, sql.search_ann_filtered, where, *args)
                if where is None or len(rows) >= top_k:
                    return [_vector_hit(index.spec.metric, row) for row in rows]
                # The iterative scan stopped (hnsw.max_scan_tuples) before k chunks passed the filter,
                # or fewer pass at all: the exact scan says which.
            rows = await fetch(conn, sql.search_exact, sql.search_exact_filtered, where, encoded, top_k)
        return [_vector_hit(index.spec.metric, row) for row in rows]

    @mapped
    @routed_read
    async def lexical_search(
        self,
        index_name: str,
        query: LexicalQuery,
        *,
        top_k: int,
        filters: FilterSpec | None = None,
    ) -> list[StoreHit]:
        index = await self._require(index_name)
        validate_top_k(top_k)
        where = parse_filter(filters)
        analysed = analyse_query(query, self._analyzer)
        if analysed.is_empty:
            return []
        terms = query_terms(analysed)
        async with self.read_router.connection() as conn:
            rows = await self._lexical_reads.rows(conn, index, terms, top_k, where)
        return [lexical_hit(row) for row in rows[:top_k]]


def _completed(documents: list[PreparedDocument], terms: SliceTerms, row_ids: Sequence[int]) -> _Prepared:
    """Complete the documents' rows with their chunks' terms (``terms`` holds them in chunk order) and
    reserved row ids, and encode the postings blocks."""
    start = 0
    for doc in documents:
        stop = start + len(doc.rows)
        add_terms(doc, terms.tsvectors[start:stop], terms.term_counts[start:stop], terms.identifiers[start:stop])
        start = stop
    add_row_ids(documents, row_ids)
    written = PostingsBuffer()
    written.add(terms.postings, row_ids, terms.term_counts)
    return _Prepared(documents, terms, written.blocks())


def _lexemes(old: asyncpg.Record | None) -> list[str]:
    """The lexemes of the chunks a write deleted: they received tombstones."""
    return [] if old is None else list(old["lexemes"])


def _vector_hit(metric: DistanceMetric, row: Any) -> StoreHit:
    distance = float(row["distance"])
    # Inner-product operators return the negated product; Euclidean returns the distance itself.
    raw = distance if metric is DistanceMetric.EUCLIDEAN else -distance
    return StoreHit(
        document_id=row["document_id"],
        chunk_id=row["chunk_id"],
        content=row["content"],
        metadata=chunk_metadata(row["metadata"]),
        raw_score=raw,
        metric=_METRIC_NAMES[metric],
        higher_is_better=metric is not DistanceMetric.EUCLIDEAN,
        relevance=scoring.relevance(metric, raw),
    )
