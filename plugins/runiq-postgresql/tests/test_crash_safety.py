"""Crash safety: a process ingesting into PostgreSQL is killed with SIGKILL at random points.

The run writes through the bulk path (``replace_documents``, several documents per transaction).

After every kill, each document is at exactly its old or its new version (its stored chunk set is one
version's complete chunk set, never a mix or a prefix), no document is missing, and a final run
converges to the new version everywhere.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import asyncpg

from runiq.rag import RagDocument
from runiq.rag._chunking import ChunkingOptions, TextChunker

DOCUMENTS = 240
TRIALS = 20
CHILD = textwrap.dedent(
    """
    import asyncio, sys
    import runiq_postgresql.plugin
    from runiq.hosting import HostBuilder
    from runiq.rag import HashingEmbedding, RagDocument, RagIngestionManager, add_runiq_rag
    from runiq.rag._ingestion import pipeline
    from runiq_postgresql import PostgresVectorStorage

    # Small writes: a run is many bulk writes of several documents each (one transaction per write),
    # so a kill lands between, before and inside them.
    pipeline.WRITE_CHUNKS = 24

    sys.path.insert(0, sys.argv[4])
    from crash_corpus import documents

    dsn, schema, version = sys.argv[1], sys.argv[2], int(sys.argv[3])
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_postgresql.plugin])
    add_runiq_rag(builder, lambda rag: rag.add_index("crash", lambda index: index
        .use_documents(documents(version))
        .use_embedding(HashingEmbedding(dimensions=32))
        .use_vector_store(PostgresVectorStorage(dsn=dsn, schema=schema))
        .configure_chunking(max_characters=120, overlap=0)
        .configure_embedding_batching(batch_size=1, concurrency=1)))

    async def main():
        async with builder.build() as host:
            print("READY", flush=True)  # the parent times its kill from here, not from process start
            operation = await host.services.get(RagIngestionManager).run("crash")
            print("RESULT", operation.state.value, flush=True)

    asyncio.run(main())
    """
)
CORPUS = textwrap.dedent(
    f"""
    from runiq.rag import RagDocument

    def content(i, version):
        paragraphs = 2 + (i + version) % 4
        return "\\n\\n".join(
            f"Document {{i}} version {{version}} paragraph {{p}} about policy item {{i * 7 + p}}."
            for p in range(paragraphs)
        )

    def documents(version):
        return [RagDocument(document_id=f"doc-{{i:03d}}", content=content(i, version)) for i in range({DOCUMENTS})]
    """
)


def _expected(tmp_path: Path) -> dict[int, dict[str, list[str]]]:
    sys.path.insert(0, str(tmp_path))
    try:
        import crash_corpus  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    chunker = TextChunker(ChunkingOptions(max_characters=120, overlap=0))
    out: dict[int, dict[str, list[str]]] = {}
    for version in range(TRIALS + 2):
        docs: list[RagDocument] = crash_corpus.documents(version)
        out[version] = {d.document_id: [c.content for c in chunker.chunk(d)] for d in docs}
    return out


def _spawn(dsn: str, schema: str, version: int, tmp_path: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNIQ_")}
    return subprocess.Popen(
        [sys.executable, str(tmp_path / "child.py"), dsn, schema, str(version), str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )


def _wait_ready(child: subprocess.Popen[str]) -> None:
    """Read the child's output until it says its host is built (or it ends)."""
    assert child.stdout is not None
    for line in child.stdout:
        if line.startswith("READY"):
            return


def _result(child: subprocess.Popen[str]) -> str:
    out = child.communicate(timeout=180)[0]
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    return lines[-1].split()[1] if lines else "no result"


async def _stored(dsn: str, schema: str) -> tuple[dict[str, list[str]], set[str]]:
    conn = await asyncpg.connect(dsn)
    try:
        index_id = await conn.fetchval(f'SELECT index_id FROM "{schema}".indexes WHERE name = $1', "crash")
        rows = await conn.fetch(
            f"SELECT document_id, array_agg(content ORDER BY ordinal) AS contents "
            f'FROM "{schema}".chunks_{int(index_id)} GROUP BY document_id'
        )
        documents = await conn.fetch(f'SELECT document_id FROM "{schema}".documents WHERE index_id = $1', index_id)
    finally:
        await conn.close()
    return {r["document_id"]: list(r["contents"]) for r in rows}, {r["document_id"] for r in documents}


async def test_sigkill_at_random_points_leaves_every_document_at_old_or_new_version(
    postgres_dsn: str, schema: str, tmp_path: Path
) -> None:
    """Twenty SIGKILLs mid-ingestion: every document is one whole version; a final run converges."""
    (tmp_path / "child.py").write_text(CHILD)
    (tmp_path / "crash_corpus.py").write_text(CORPUS)
    expected = _expected(tmp_path)
    rng = random.Random(1503)
    first = _spawn(postgres_dsn, schema, 0, tmp_path)
    assert _result(first) == "completed"
    versions_seen: set[int] = set()
    for trial in range(1, TRIALS + 1):
        child = _spawn(postgres_dsn, schema, trial, tmp_path)
        await asyncio.to_thread(_wait_ready, child)  # start-up time varies with the machine's load
        await asyncio.sleep(rng.uniform(0.02, 1.2))
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=30)  # reaps the process and closes its pipe
        chunks, documents = await _stored(postgres_dsn, schema)
        assert set(chunks) == set(expected[0]), f"trial {trial}: a document is missing"
        assert documents == set(expected[0])
        for doc_id, contents in chunks.items():
            matches = [v for v in range(trial + 1) if expected[v][doc_id] == contents]
            assert matches, f"trial {trial}: {doc_id} holds a mixed or partial chunk set"
            versions_seen.update(matches)
    assert len(versions_seen) > 2, "the kills never interrupted a run part-way; widen the timing"
    final = _spawn(postgres_dsn, schema, TRIALS + 1, tmp_path)
    assert _result(final) == "completed"
    chunks, _ = await _stored(postgres_dsn, schema)
    assert chunks == expected[TRIALS + 1]
