"""What the commands do, as coroutines returning output documents. Imported only when a command runs, so
``runiq --help`` never loads the RAG core, numpy or a plugin; ``status`` reads what the configuration
declares, so it imports neither the ingestion nor the retrieval modules (``ingest`` and ``query`` do)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from runiq.cli.hosting import cli_host, declared_indexes
from runiq.cli.output import IndexStatusOutput, IngestOutput, QueryOutput, StatusOutput
from runiq.cli.render import plain
from runiq.rag._ingestion.operation import RagIndexReadiness

if TYPE_CHECKING:
    from rich.console import Console

    from runiq.hosting import Host
    from runiq.rag import RagIngestionOperation, RagQuery

__all__ = ["ingest", "query", "status"]


async def ingest(config: Path, only: str | None, progress: Console) -> IngestOutput:
    from runiq.rag import IndexRegistry

    async with cli_host(config) as host:
        names = [only] if only else list(host.services.get(IndexRegistry).names)
        return IngestOutput.of([await _ingest_with_progress(host, name, progress) for name in names])


async def _ingest_with_progress(host: Host, name: str, console: Console) -> RagIngestionOperation:
    from runiq.cli.progress import IngestionBar
    from runiq.rag import RagIngestionManager

    manager = host.services.get(RagIngestionManager)
    await manager.start(name)
    with IngestionBar(console, name) as bar:
        waiter = asyncio.ensure_future(manager.wait(name))
        while not waiter.done():
            active = manager.status(name).active_operation
            if active is not None:
                bar.show(active)
            await asyncio.wait({waiter}, timeout=0.2)
        finished = waiter.result()
        bar.show(finished)
        return finished


async def query(
    config: Path,
    request: RagQuery,
    progress: Console,
) -> QueryOutput:
    """Retrieve in this process. An in-memory index lives only in this process, so it is ingested first."""
    from runiq.rag import RagRetriever
    from runiq.rag._errors import VectorIndexNotFoundError

    async with cli_host(config) as host:
        retriever = host.services.get(RagRetriever)
        try:
            result = await retriever.retrieve(request)
        except VectorIndexNotFoundError:
            progress.print(
                f"index '{plain(request.index_name)}' has no stored data in this process; ingesting it first",
                style="yellow",
                markup=False,
            )
            await _ingest_with_progress(host, request.index_name, progress)
            result = await retriever.retrieve(request)
        return QueryOutput.of(result)


async def status(config: Path) -> StatusOutput:
    """The declared indexes, each with this process's readiness: a command has run nothing yet, so each
    reads ``not_initialized``, as a new :class:`~runiq.rag.RagIngestionManager` reports it (no manager,
    store or provider is created to say so)."""
    return StatusOutput(
        indexes=[
            IndexStatusOutput.of(definition, RagIndexReadiness.NOT_INITIALIZED)
            for definition in declared_indexes(config)
        ]
    )
