"""``runiq``: ingest, query and inspect the RAG indexes declared in a ``runiq.toml``; plugins add more
(the dashboard adds ``runiq serve``) through ``runiq_register_cli_commands``.

This module parses arguments only: it imports typer, rich and the standard library, and each command
imports what it needs when it runs, so ``runiq --help`` loads neither the RAG core (numpy, pydantic
models, the dependency container) nor a provider plugin. Documents go to stdout (a table, or one JSON
document with ``--json``); progress, warnings, errors and structured logs go to stderr.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from runiq import __version__
from runiq.cli.extensions import PluginCommandGroup
from runiq.cli.toolkit import ConfigOption, JsonOption, console, err, print_json, reported_errors, run_command

if TYPE_CHECKING:
    from runiq.rag import MetadataValue, RagQuery

__all__ = ["app", "create_app"]


def _version(value: bool) -> None:
    if value:
        console.print(f"runiq {__version__}")
        raise typer.Exit


def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """runiq command line."""


def ingest(
    index: Annotated[str | None, typer.Argument(help="Index to ingest (default: every index).")] = None,
    config: ConfigOption = Path("runiq.toml"),
    as_json: JsonOption = False,
) -> None:
    """Run ingestion now; show progress, each run's counters and every failed document with its code.

    Exits 1 unless every run completed."""
    from runiq.cli import commands
    from runiq.cli.render import ingest_report

    report = run_command(commands.ingest(config, index, progress=err))
    if as_json:
        print_json(report)
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

        with reported_errors():
            result = query_server(server, request, api_key=api_key)
    else:
        from runiq.cli import commands

        result = run_command(commands.query(config, request, progress=err))
    if as_json:
        print_json(result)
    else:
        console.print(hits_table(result))


def status(config: ConfigOption = Path("runiq.toml"), as_json: JsonOption = False) -> None:
    """Show the declared indexes, their strategies and stores."""
    from runiq.cli import commands
    from runiq.cli.render import status_table

    report = run_command(commands.status(config))
    if as_json:
        print_json(report)
    else:
        console.print(status_table(report))


def create_app(*, plugins: Iterable[object] = (), load_entry_points: bool = True) -> typer.Typer:
    """The ``runiq`` command line: runiq's commands, and the commands of ``plugins`` and (with
    ``load_entry_points``) of the installed ``runiq.cli`` plugins, loaded when first needed."""
    cli = typer.Typer(
        name="runiq",
        help="Retrieval-augmented generation indexes: ingest documents, query them, inspect and serve them.",
        no_args_is_help=True,
        add_completion=False,
        cls=PluginCommandGroup.using(plugins=plugins, load_entry_points=load_entry_points),
    )
    cli.callback()(main)
    for command in (ingest, query, status):
        cli.command()(command)
    return cli


app = create_app()
