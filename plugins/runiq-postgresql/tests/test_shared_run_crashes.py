"""Three worker processes share one ingestion run through PostgreSQL while they are SIGKILLed at random.

Each worker is a separate Python process that builds a host with ``shared_runs`` and runs the index
over one shared directory, with an embedder that sleeps per batch (so the run takes a while). The
parent kills a random live worker at random moments; half the time it starts a replacement, else
the survivors take the dead worker's bucket over when its lease expires. At the end every document,
content hash and chunk, and the index's BM25 statistics, are identical to one ordinary run of the
same corpus: nothing lost, nothing written twice.
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import asyncpg

from runiq.rag import RagIngestionState
from runiq.rag.providers import DistanceMetric
from runiq_postgresql.queries import IndexSql

DOCUMENTS = 240
KILLS = 6
LEASE_SECONDS = 2
EMBED_SECONDS = 0.06  # per batch of 4 chunks: about 9 s of embedding for the corpus's 600 chunks
WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from contextlib import asynccontextmanager
    import runiq_postgresql.plugin
    from runiq.hosting import HostBuilder
    from runiq.rag import RagIngestionManager, add_runiq_rag
    from runiq.rag.providers import hookimpl
    from runiq.rag.testing import SlowEmbedder

    dsn, schema, documents, mode, delay = sys.argv[1:6]

    class SlowPlugin:
        @hookimpl
        def runiq_register_providers(self, registry):
            @asynccontextmanager
            async def open_slow(options):
                yield SlowEmbedder(delay=float(delay), dimensions=16)

            registry.add_embedding("slow", open_slow)

    def ingestion(i):
        return i.shared_runs(buckets=12, lease_seconds=LEASE) if mode == "shared" else i.manual()

    builder = HostBuilder(load_entry_points=False, plugins=[runiq_postgresql.plugin, SlowPlugin()])
    add_runiq_rag(builder, lambda rag: rag.add_index("docs", lambda index: index
        .use_directory(documents, "*.md")
        .use_embedding("slow")
        .use_vector_store("postgresql", dsn=dsn, schema=schema, pool_max_size=4)
        .configure_chunking(max_characters=80, overlap=0)
        .configure_embedding_batching(batch_size=4, concurrency=1)
        .configure_ingestion(ingestion)))

    async def main():
        async with builder.build() as host:
            print("READY", flush=True)
            operation = await host.services.get(RagIngestionManager).run("docs")
            print("RESULT", operation.state.value, operation.operation_id, flush=True)

    asyncio.run(main())
    """
).replace("LEASE", str(LEASE_SECONDS))


def _corpus(directory: Path) -> Path:
    directory.mkdir()
    for i in range(DOCUMENTS):
        paragraphs = 1 + i % 4
        text = "\n\n".join(
            f"Document {i} paragraph {p} about policy item {i * 7 + p} and more." for p in range(paragraphs)
        )
        (directory / f"doc-{i:03d}.md").write_text(text)
    return directory


class Workers:
    """Worker processes of one shared run; output goes to files so a killed one never blocks a pipe."""

    def __init__(self, dsn: str, schema: str, documents: Path, logs: Path) -> None:
        self._args = [dsn, schema, str(documents), "shared", str(EMBED_SECONDS)]
        self._logs = logs
        self._script = logs / "worker.py"
        self._script.write_text(WORKER)
        self.live: list[tuple[subprocess.Popen[bytes], Path]] = []
        self.finished: list[Path] = []
        self._count = 0

    def spawn(self) -> None:
        self._count += 1
        out = self._logs / f"worker-{self._count}.out"
        env = {k: v for k, v in os.environ.items() if not k.startswith("RUNIQ_")}
        with out.open("wb") as sink:
            process = subprocess.Popen(
                [sys.executable, str(self._script), *self._args], stdout=sink, stderr=subprocess.DEVNULL, env=env
            )
        self.live.append((process, out))

    def wait_ready(self, timeout: float = 180.0) -> None:
        """Until every live worker has built its host (start-up takes seconds on a loaded machine)."""
        deadline = time.monotonic() + timeout
        while not all(b"READY" in out.read_bytes() for _, out in self.live):
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.1)

    def reap(self) -> None:
        for entry in list(self.live):
            if entry[0].poll() is not None:
                self.live.remove(entry)
                self.finished.append(entry[1])

    def kill(self, rng: random.Random) -> None:
        process, _ = entry = rng.choice(self.live)
        process.kill()
        process.wait(timeout=30)
        self.live.remove(entry)

    def wait_all(self) -> list[str]:
        for process, out in self.live:
            process.wait(timeout=240)
            self.finished.append(out)
        self.live = []
        return [line for out in self.finished for line in out.read_text().splitlines() if line.startswith("RESULT")]


async def _snapshot(dsn: str, schema: str) -> dict[str, object]:
    """Documents with their hashes and chunk contents, chunk rows, and the index's BM25 statistics."""
    conn = await asyncpg.connect(dsn)
    try:
        s = f'"{schema}"'
        index = await conn.fetchrow(f"SELECT index_id, chunk_count, total_terms FROM {s}.indexes WHERE name = 'docs'")
        table = f"{s}.chunks_{int(index['index_id'])}"
        documents = await conn.fetch(f"SELECT document_id, content_hash, chunk_count FROM {s}.documents")
        chunks = await conn.fetch(
            f"SELECT document_id, array_agg(content ORDER BY ordinal) AS contents, count(*) AS rows "
            f"FROM {table} GROUP BY document_id"
        )
        sql = IndexSql.build(schema, index["index_id"], None, DistanceMetric.COSINE)
        terms = await conn.fetch(sql.document_frequencies)
    finally:
        await conn.close()
    return {
        "documents": {r["document_id"]: (r["content_hash"], r["chunk_count"]) for r in documents},
        "chunks": {r["document_id"]: (list(r["contents"]), r["rows"]) for r in chunks},
        "index": (index["chunk_count"], index["total_terms"]),
        "terms": {r["term"]: r["df"] for r in terms},
    }


async def _reference(dsn: str, documents: Path, logs: Path) -> dict[str, object]:
    """One ordinary run of the corpus by the same worker program (no sharing, no kills) into its own schema."""
    schema = f"t_{uuid.uuid4().hex[:16]}"
    (logs / "worker.py").write_text(WORKER)
    try:
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, str(logs / "worker.py"), dsn, schema, str(documents), "single", "0"],
            capture_output=True,
            timeout=240,
            check=False,
        )
        assert b"RESULT completed" in done.stdout
        return await _snapshot(dsn, schema)
    finally:
        conn = await asyncpg.connect(dsn)
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await conn.close()


async def test_sigkilled_workers_leave_the_result_of_one_worker(postgres_dsn: str, schema: str, tmp_path: Path) -> None:
    documents = _corpus(tmp_path / "docs")
    reference = await _reference(postgres_dsn, documents, tmp_path)
    rng = random.Random(30)
    workers = Workers(postgres_dsn, schema, documents, tmp_path)
    for _ in range(3):
        workers.spawn()
    kills = 0
    await asyncio.to_thread(workers.wait_ready)
    while kills < KILLS:
        await asyncio.sleep(rng.uniform(0.3, 1.2))
        workers.reap()
        if not workers.live:
            break  # the run is over
        workers.kill(rng)
        kills += 1
        if not workers.live or rng.random() < 0.5:
            workers.spawn()  # a restarted worker joins the run; else the survivors take the bucket over
    results = await asyncio.to_thread(workers.wait_all)

    assert kills >= 3, "the run ended before the kills; slow the embedder down"
    assert results
    assert {line.split()[1] for line in results} == {RagIngestionState.COMPLETED.value}
    conn = await asyncpg.connect(postgres_dsn)
    try:
        runs = await conn.fetch(f'SELECT operation_id, state FROM "{schema}".shared_runs ORDER BY started_at')
        takeovers = await conn.fetchval(
            f'SELECT sum(takeovers) FROM "{schema}".work_claims WHERE operation_id = $1', runs[0]["operation_id"]
        )
    finally:
        await conn.close()
    assert {row["state"] for row in runs} == {"completed"}
    assert runs[0]["operation_id"] in {line.split()[2] for line in results}
    assert takeovers >= 1, "no dead worker's bucket was taken over"
    assert await _snapshot(postgres_dsn, schema) == reference
