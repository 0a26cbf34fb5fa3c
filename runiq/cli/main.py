"""``runiq``: ingest, query, inspect and serve RAG indexes declared in a ``runiq.toml``.

This module parses arguments only: it imports typer, rich and the standard library, and each command
imports what it needs when it runs, so ``runiq --help`` loads neither the RAG core (numpy, pydantic
models, the dependency container) nor any plugin. Documents go to stdout (a table, or one JSON document
with ``--json``); progress, warnings, errors and structured logs go to stderr.
"""

from __future__ import annotations

import importlib.util
import json
import signal
import sys
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console

from runiq import __version__

if TYPE_CHECKING:
    from pydantic import BaseModel

    from runiq.rag import MetadataValue, RagQuery

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
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print one JSON document (see docs/reference/cli.md) instead of a table.")
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


@contextmanager
def _reported_errors() -> Iterator[None]:
    """A runiq error is one line on stderr and exit status 1; its message is a fixed description."""
    from runiq.errors import RagError

    try:
        yield
    except RagError as exc:
        err.print(f"error: {exc}", style="red", markup=False, highlight=False)
        raise typer.Exit(1) from None


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a command; Ctrl-C or SIGTERM stops it cleanly (stores closed, an embedded server stopped
    when this was its last user) and exits with 128 + the signal number."""
    from runiq.hosting import Interrupted, run_until_signalled

    try:
        with _reported_errors():
            return run_until_signalled(coro)
    except Interrupted as exc:
        err.print(f"[yellow]stopped ({signal.Signals(exc.signum).name})[/yellow]")
        raise typer.Exit(exc.exit_code) from None


def _print_json(document: BaseModel) -> None:
    """Exactly one JSON document on stdout, written directly (Rich would wrap and colour it)."""
    sys.stdout.write(document.model_dump_json(indent=2) + "\n")
    sys.stdout.flush()


@app.command()
def ingest(
    index: Annotated[str | None, typer.Argument(help="Index to ingest (default: every index).")] = None,
    config: ConfigOption = Path("runiq.toml"),
    as_json: JsonOption = False,
) -> None:
    """Run ingestion now; show progress, each run's counters and every failed document with its code.

    Exits 1 unless every run completed."""
    from runiq.cli import commands
    from runiq.cli.render import ingest_report

    report = _run(commands.ingest(config, index, progress=err))
    if as_json:
        _print_json(report)
    else:
        console.print(ingest_report(report))
    if not report.completed:
        raise typer.Exit(1)


def _filters(values: list[str]) -> dict[str, MetadataValue]:
    """``KEY=VALUE`` pairs; a VALUE that reads as a JSON number or boolean is one, anything else a string."""
    filters: dict[str, MetadataValue] = {}
    for item in values:
        key, separator, raw = item.partition("=")
        if not separator or not key.strip():
            raise typer.BadParameter("filters look like KEY=VALUE", param_hint="--filter")
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        filters[key.strip()] = value if isinstance(value, str | int | float | bool) else raw
    return filters


def _request(index: str, text: str, mode: str | None, top_k: int, filters: list[str]) -> RagQuery:
    from runiq.errors import RagValidationError
    from runiq.rag import RagQuery, RagRetrievalMode

    modes = {m.value: m for m in RagRetrievalMode}
    if mode is not None and mode not in modes:
        raise typer.BadParameter(f"choose one of {', '.join(modes)}", param_hint="--mode")
    try:
        return RagQuery(
            index_name=index, text=text, mode=modes.get(mode or ""), top_k=top_k, filters=_filters(filters) or None
        )
    except RagValidationError as exc:  # the message names the rule, never the value
        raise typer.BadParameter(str(exc)) from None


@app.command()
def query(
    index: Annotated[str, typer.Argument(help="Index to query.")],
    text: Annotated[str, typer.Argument(help="Query text; wrap words in double quotes for an exact phrase.")],
    mode: Annotated[
        str | None, typer.Option(help="semantic, lexical or hybrid (default: the index's).", show_default=False)
    ] = None,
    top_k: Annotated[int, typer.Option("--top-k", "-k", min=1, max=1000, help="Candidate limit.")] = 5,
    filters: Annotated[
        list[str] | None,
        typer.Option("--filter", "-f", help="Metadata filter KEY=VALUE (repeatable; all must match)."),
    ] = None,
    server: Annotated[
        str | None,
        typer.Option(
            envvar="RUNIQ_SERVER",
            help="Ask a running `runiq serve` at this URL (the page URL it prints) instead of loading providers here.",
        ),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option(envvar="RUNIQ_API_KEY", help="API key for --server (prefer the RUNIQ_API_KEY variable)."),
    ] = None,
    config: ConfigOption = Path("runiq.toml"),
    as_json: JsonOption = False,
) -> None:
    """Retrieve from an index and print hits with their score semantics and provenance.

    Without --server the index is opened in this process (an in-memory index is ingested first)."""
    from runiq.cli.render import hits_table

    request = _request(index, text, mode, top_k, filters or [])
    if server is not None:
        from runiq.cli.remote import query_server

        with _reported_errors():
            result = query_server(server, request, api_key=api_key)
    else:
        from runiq.cli import commands

        result = _run(commands.query(config, request, progress=err))
    if as_json:
        _print_json(result)
    else:
        console.print(hits_table(result))


@app.command()
def status(config: ConfigOption = Path("runiq.toml"), as_json: JsonOption = False) -> None:
    """Show the declared indexes, their strategies and stores."""
    from runiq.cli import commands
    from runiq.cli.render import status_table

    report = _run(commands.status(config))
    if as_json:
        _print_json(report)
    else:
        console.print(status_table(report))


@app.command()
def serve(
    ctx: typer.Context,
    config_argument: Annotated[
        Path | None,
        typer.Argument(metavar="CONFIG", help="The runiq.toml to serve (same as -c).", show_default=False),
    ] = None,
    config: ConfigOption = Path("runiq.toml"),
    host: Annotated[str, typer.Option(help="Interface to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port for the dashboard (0: any free port).")] = 8710,
) -> None:
    """Run the host with its ingestion strategies and the embedded dashboard (needs runiq-dashboard);
    prints the page URL once it listens."""
    source = ctx.get_parameter_source("config")
    if config_argument is not None and getattr(source, "name", None) == "COMMANDLINE":
        raise typer.BadParameter("CONFIG or --config, not both")
    if importlib.util.find_spec("runiq_dashboard") is None:
        err.print("[red]error:[/red] the dashboard is not installed; pip install runiq-dashboard")
        raise typer.Exit(1) from None
    from runiq.cli import commands

    def announce(url: str) -> None:
        console.print(f"runiq dashboard: {url}", markup=False, highlight=False, soft_wrap=True)
        console.file.flush()

    _run(commands.serve(config_argument or config, host, port, announce))
