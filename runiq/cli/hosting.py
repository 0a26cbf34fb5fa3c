"""Building a host from a ``runiq.toml`` for CLI commands, or reading only what it declares."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import typer

from runiq.errors import RagError, field_names

if TYPE_CHECKING:
    from runiq.hosting import Host
    from runiq.rag import IndexDefinition
    from runiq.settings import RuniqSettings

__all__ = ["build_host", "cli_host", "declared_indexes", "load_settings"]

T = TypeVar("T")


def load_settings(config: Path) -> RuniqSettings:
    from pydantic import ValidationError

    from runiq.settings import RuniqSettings

    if not config.is_file():
        raise typer.BadParameter(f"configuration file not found: {config}", param_hint="--config")
    try:
        return RuniqSettings.load(config)
    except ValueError as exc:  # pydantic validation: name the fields, never echo values
        fields = field_names(exc, whole="settings") if isinstance(exc, ValidationError) else type(exc).__name__
    # Raised outside the handler: the validation error (which holds the values, a DSN for one) is not chained.
    raise typer.BadParameter(f"invalid configuration: {fields}", param_hint="--config")


def _as_usage_error(build: Callable[[], T]) -> T:
    """``build()``; a runiq error (an unknown provider, invalid options, a plugin that fails to load) is a
    usage error of ``--config`` with the same content-free message."""
    try:
        return build()
    except RagError as exc:
        message = str(exc)  # runiq messages are content-free by contract
    raise typer.BadParameter(message, param_hint="--config")


def build_host(config: Path) -> Host:
    """The host a ``runiq.toml`` declares, with installed plugins; logging configured from its settings."""
    from runiq.hosting import HostBuilder
    from runiq.logging import configure_logging
    from runiq.rag._wiring import add_runiq_rag

    settings = load_settings(config)
    configure_logging(settings.logging)

    def build() -> Host:
        builder = HostBuilder(settings=settings)
        add_runiq_rag(builder)
        return builder.build()

    return _as_usage_error(build)


def declared_indexes(config: Path) -> tuple[IndexDefinition, ...]:
    """The indexes a ``runiq.toml`` declares, validated as :func:`build_host` validates them (installed
    plugins loaded, every plugin's ``runiq_configure_host`` run), without RAG's services: no retrieval,
    ingestion or store module is imported. Nothing here logs, so logging is left unconfigured."""
    from runiq.hosting import HostBuilder
    from runiq.rag._wiring import declare_runiq_rag

    settings = load_settings(config)

    def build() -> tuple[IndexDefinition, ...]:
        builder = HostBuilder(settings=settings)
        rag = declare_runiq_rag(builder)
        builder.build()
        return rag.definitions

    return _as_usage_error(build)


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
