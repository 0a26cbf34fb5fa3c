"""Logging: library modules log through :func:`get_logger`; applications render with :func:`configure_logging`.

structlog's unconfigured default prints every event to stdout, where a script's own output (or the CLI's
JSON document) goes. So runiq never logs through that default: until the application configures
structlog, runiq's events go to standard-library loggers named after their modules, under a
``NullHandler``, as library logging should (nothing is printed unless the application configures
``logging``, and then they follow its handlers and levels). Once structlog is configured (by the
application, the ``runiq`` command line, :func:`runiq.sync.open_host`, or a test's ``capture_logs``),
the same loggers render through that configuration. runiq never changes structlog's global
configuration on its own, so an application's ``structlog.configure_once`` still applies.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from runiq.settings import LoggingSettings

__all__ = ["LibraryLogger", "configure_logging", "get_logger"]


def get_logger(name: str) -> LibraryLogger:
    """The logger of a runiq (or runiq plugin) module: ``log = get_logger(__name__)``.

    Loggers are named after the module's public path: a private part loses its underscore (a module
    ``package._impl.store`` logs as ``package.impl.store``), so the names operators configure do not
    change when a module is made private.
    """
    name = _public_name(name)
    logging.getLogger(name.partition(".")[0]).addHandler(_NULL_HANDLER)  # a no-op once it is there
    return LibraryLogger(name)


def _public_name(module: str) -> str:
    """``module`` without the leading underscore of each private part (``__main__`` is kept)."""
    return ".".join(
        part[1:] if part.startswith("_") and not part.startswith("__") else part for part in module.split(".")
    )


_NULL_HANDLER = logging.NullHandler()


class LibraryLogger:
    """Events go to the application's structlog configuration once there is one, else to stdlib logging.

    The choice is made per event, so configuring logging after the modules were imported takes effect.
    structlog (which loads rich and attrs) is imported on the first event, not with the module that
    logs: ``runiq status`` imports modules that never log in a command's life.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._loggers: tuple[Any, Any] | None = None  # (configured, unconfigured), made on the first event

    def _target(self) -> Any:
        import structlog

        if self._loggers is None:
            unconfigured = structlog.wrap_logger(
                logging.getLogger(self._name),
                processors=[
                    structlog.stdlib.filter_by_level,
                    structlog.processors.KeyValueRenderer(key_order=["event"], drop_missing=True),
                ],
                wrapper_class=structlog.stdlib.BoundLogger,
            )
            self._loggers = (structlog.get_logger(self._name), unconfigured)
        configured, unconfigured = self._loggers
        return configured if structlog.is_configured() else unconfigured

    def debug(self, event: str, **fields: Any) -> None:
        self._target().debug(event, **fields)

    def info(self, event: str, **fields: Any) -> None:
        self._target().info(event, **fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._target().warning(event, **fields)

    def error(self, event: str, **fields: Any) -> None:
        self._target().error(event, **fields)


def configure_logging(settings: LoggingSettings | None = None) -> None:
    """Configure structlog for a process: console (human) or JSON lines, written to stderr.

    For applications and the command line; library code never calls it."""
    import structlog

    from runiq.settings import LoggingSettings

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
