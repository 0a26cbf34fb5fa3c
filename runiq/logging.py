"""structlog configuration for applications. The library itself never calls this; the CLI does."""

from __future__ import annotations

import logging
import sys

import structlog

from runiq.settings import LoggingSettings

__all__ = ["configure_logging"]


def configure_logging(settings: LoggingSettings | None = None) -> None:
    """Configure structlog for a process: console (human) or JSON lines, written to stderr."""
    options = settings or LoggingSettings()
    level = getattr(logging, options.level.upper())
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if options.format == "json" else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
