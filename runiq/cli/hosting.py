"""Building a host from a ``runiq.toml`` for CLI commands."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import typer
from pydantic import ValidationError

from runiq.errors import field_names
from runiq.hosting import Host, HostBuilder
from runiq.logging import configure_logging
from runiq.rag import RagError, add_runiq_rag
from runiq.settings import RuniqSettings

__all__ = ["build_host", "cli_host", "load_settings"]


def load_settings(config: Path) -> RuniqSettings:
    if not config.is_file():
        raise typer.BadParameter(f"configuration file not found: {config}", param_hint="--config")
    try:
        return RuniqSettings.load(config)
    except ValueError as exc:  # pydantic validation: name the fields, never echo values
        fields = _fields(exc)
    # Raised outside the handler: the validation error (which holds the values, a DSN for one) is not chained.
    raise typer.BadParameter(f"invalid configuration: {fields}", param_hint="--config")


def _fields(exc: ValueError) -> str:
    return field_names(exc, whole="settings") if isinstance(exc, ValidationError) else type(exc).__name__


def build_host(config: Path) -> Host:
    """The host a ``runiq.toml`` declares, with installed plugins; logging configured from its settings."""
    settings = load_settings(config)
    configure_logging(settings.logging)
    try:
        builder = HostBuilder(settings=settings)
        add_runiq_rag(builder)
        return builder.build()
    except RagError as exc:
        message = str(exc)  # runiq messages are content-free by contract
    raise typer.BadParameter(message, param_hint="--config")


@asynccontextmanager
async def cli_host(config: Path) -> AsyncIterator[Host]:
    """A built but not started host: CLI commands act explicitly, so no ingestion strategy fires.

    Providers open on first use; stopping the host on exit cancels the runs a command started and
    closes what was opened.
    """
    host = build_host(config)
    try:
        yield host
    finally:
        await host.stop()
