"""``runiq``: ingest, query, inspect and serve RAG indexes declared in a ``runiq.toml``."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from runiq import __version__
from runiq.cli.hosting import cli_host
from runiq.cli.render import hits_table, operation_summary, status_table
from runiq.hosting import Host, Interrupted, run_until_signalled
from runiq.rag import (
    IndexRegistry,
    RagError,
    RagIngestionManager,
    RagIngestionOperation,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    VectorIndexNotFoundError,
)

__all__ = ["app"]

T = TypeVar("T")

app = typer.Typer(
    name="runiq",
    help="Retrieval-augmented generation indexes: ingest documents, query them, inspect and serve them.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()
err = Console(stderr=True)

ConfigOption = Annotated[
    Path, typer.Option("--config", "-c", envvar="RUNIQ_CONFIG", help="The runiq.toml that declares the indexes.")
]


def _version(value: bool) -> None:
    if value:
        console.print(f"runiq {__version__}")
        raise typer.Exit


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """runiq command line."""


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a command; Ctrl-C or SIGTERM stops it cleanly (stores closed, an embedded server stopped
    when this was its last user) and exits with 128 + the signal number."""
    try:
        return run_until_signalled(coro)
    except RagError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(1) from None
    except Interrupted as exc:
        err.print(f"[yellow]stopped ({signal.Signals(exc.signum).name})[/yellow]")
        raise typer.Exit(exc.exit_code) from None


@app.command()
def ingest(
    index: Annotated[str | None, typer.Argument(help="Index to ingest (default: every index).")] = None,
    config: ConfigOption = Path("runiq.toml"),
) -> None:
    """Run ingestion now and show progress; exits non-zero unless every run completed."""
    operations = _run(_ingest(config, index))
    for operation in operations:
        console.print(operation_summary(operation))
    if any(op.state.value != "completed" for op in operations):
        raise typer.Exit(1)


async def _ingest(config: Path, only: str | None) -> list[RagIngestionOperation]:
    async with cli_host(config) as host:
        names = [only] if only else list(host.services.get(IndexRegistry).names)
        return [await _ingest_with_progress(host, name) for name in names]


async def _ingest_with_progress(host: Host, name: str) -> RagIngestionOperation:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    manager = host.services.get(RagIngestionManager)
    await manager.start(name)
    with Progress(
        TextColumn(f"[bold]{name}[/bold]"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as progress:
        task = progress.add_task("ingest", total=None, detail="")
        waiter = asyncio.ensure_future(manager.wait(name))
        while not waiter.done():
            active = manager.status(name).active_operation
            if active is not None:
                p = active.progress
                progress.update(
                    task,
                    total=p.discovered_documents or None,
                    completed=p.processed_documents,
                    detail=f"chunks {p.produced_chunks}  failed {p.failed_documents}",
                )
            await asyncio.wait({waiter}, timeout=0.2)
        return waiter.result()


@app.command()
def query(
    index: Annotated[str, typer.Argument(help="Index to query.")],
    text: Annotated[str, typer.Argument(help="Query text; wrap words in double quotes for an exact phrase.")],
    mode: Annotated[
        RagRetrievalMode | None, typer.Option(help="semantic, lexical or hybrid (default: the index's).")
    ] = None,
    top_k: Annotated[int, typer.Option("--top-k", "-k", min=1, max=1000, help="Candidate limit.")] = 5,
    config: ConfigOption = Path("runiq.toml"),
) -> None:
    """Retrieve from an index and print hits with their score semantics and provenance.

    An in-memory index lives only in this process, so it is ingested first.
    """
    _run(_query(config, index, text, mode, top_k))


async def _query(config: Path, index: str, text: str, mode: RagRetrievalMode | None, top_k: int) -> None:
    async with cli_host(config) as host:
        request = RagQuery(index_name=index, text=text, mode=mode, top_k=top_k)
        retriever = host.services.get(RagRetriever)
        try:
            result = await retriever.retrieve(request)
        except VectorIndexNotFoundError:
            err.print(f"[yellow]index '{index}' has no stored data in this process; ingesting it first[/yellow]")
            await _ingest_with_progress(host, index)
            result = await retriever.retrieve(request)
        console.print(hits_table(result))


@app.command()
def status(config: ConfigOption = Path("runiq.toml")) -> None:
    """Show the declared indexes, their strategies and stores."""
    _run(_status(config))


async def _status(config: Path) -> None:
    async with cli_host(config) as host:
        registry = host.services.get(IndexRegistry)
        manager = host.services.get(RagIngestionManager)
        console.print(status_table(registry, manager))


@app.command()
def serve(
    config: Annotated[Path, typer.Argument(help="The runiq.toml to serve.")],
    host: Annotated[str, typer.Option(help="Interface to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port for the dashboard.")] = 8710,
) -> None:
    """Run the host with its ingestion strategies and the embedded dashboard (needs runiq-dashboard)."""
    try:
        from runiq_dashboard import serve_config  # type: ignore[import-not-found]
    except ImportError:
        err.print("[red]error:[/red] the dashboard is not installed; pip install runiq-dashboard")
        raise typer.Exit(1) from None
    _run(serve_config(config, host=host, port=port))
