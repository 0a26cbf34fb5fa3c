"""What every ``runiq`` command uses, built in or added by a plugin (``runiq_register_cli_commands``).

The consoles (documents on stdout, everything else on stderr), the ``--config`` and ``--json`` options,
running a command's coroutine so that a runiq error is one line and Ctrl-C or SIGTERM stops it cleanly,
and building the host a ``runiq.toml`` declares. Importing this module loads typer and rich only.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console

if TYPE_CHECKING:
    from pydantic import BaseModel

    from runiq.cli.extensions import CommandRegistry
    from runiq.cli.output import QueryOutput
    from runiq.hosting import Host

__all__ = [
    "CommandRegistry",
    "ConfigOption",
    "JsonOption",
    "QueryOutput",
    "build_host",
    "console",
    "err",
    "print_json",
    "reported_errors",
    "run_command",
]

T = TypeVar("T")

console = Console()  # documents: tables, or the one JSON document of --json
err = Console(stderr=True)  # progress, warnings, errors and structured logs

ConfigOption = Annotated[
    Path, typer.Option("--config", "-c", envvar="RUNIQ_CONFIG", help="The runiq.toml that declares the indexes.")
]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print one JSON document (see docs/reference/cli.md) instead of a table.")
]


@contextmanager
def reported_errors() -> Iterator[None]:
    """A runiq error is one line on stderr and exit status 1; its message is a fixed description."""
    from runiq.errors import RagError

    try:
        yield
    except RagError as exc:
        err.print(f"error: {exc}", style="red", markup=False, highlight=False)
        raise typer.Exit(1) from None


def run_command(coro: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine; Ctrl-C or SIGTERM stops it cleanly (its ``finally`` blocks and
    ``async with`` exits run: the host stops, stores close) and exits with 128 + the signal number."""
    from runiq.hosting import Interrupted, run_until_signalled

    try:
        with reported_errors():
            return run_until_signalled(coro)
    except Interrupted as exc:
        err.print(f"[yellow]stopped ({signal.Signals(exc.signum).name})[/yellow]")
        raise typer.Exit(exc.exit_code) from None


def print_json(document: BaseModel) -> None:
    """Exactly one JSON document on stdout, written directly (Rich would wrap and colour it)."""
    sys.stdout.write(document.model_dump_json(indent=2) + "\n")
    sys.stdout.flush()


def build_host(config: Path) -> Host:
    """The host ``config`` declares, with the installed plugins and RAG registered, logging configured
    for the command line; built, not started. A missing or invalid file is a usage error naming the
    fields (never their values)."""
    from runiq.cli.hosting import build_host as build

    return build(config)


_LAZY = {"CommandRegistry": "runiq.cli.extensions", "QueryOutput": "runiq.cli.output"}

if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any attribute

    def __getattr__(name: str) -> object:
        """``CommandRegistry`` (the argument of ``runiq_register_cli_commands``) and ``QueryOutput`` (the
        ``runiq query --json`` document) load on first use: the one imports this module, the other pydantic."""
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
