"""uvicorn's error log, reduced to exception types.

uvicorn logs whatever reaches it from the application ("Exception in ASGI application") with the
exception attached, so its handlers print the message and the traceback. The dashboard application
lets no ``Exception`` out (:class:`runiq_dashboard.middleware.ContainFailures`); this filter covers
what still can: a ``BaseException`` that is not an ``Exception``, or a failure in the outermost layer
itself. :class:`runiq_dashboard.DashboardServer` installs it on the ``uvicorn.error`` logger (process
wide, once), where it runs before any handler, whichever handlers a logging configuration attaches.
"""

from __future__ import annotations

import logging

__all__ = ["EXCEPTION_TYPE_ONLY", "ExceptionTypeOnly", "install_exception_type_only"]

SERVER_ERROR_LOGGER = "uvicorn.error"


class ExceptionTypeOnly(logging.Filter):
    """Keeps the record (its level and message), replaces its exception and stack by the type's name."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info is None and record.stack_info is None:
            return True
        exc_type = record.exc_info[0] if record.exc_info else None
        record.msg = f"{str(record.msg).rstrip()} [{exc_type.__name__ if exc_type else 'stack omitted'}]"
        record.exc_info = None
        record.exc_text = None
        record.stack_info = None
        return True


EXCEPTION_TYPE_ONLY = ExceptionTypeOnly()


def install_exception_type_only() -> None:
    """Idempotent: ``addFilter`` ignores a filter that is already there."""
    logging.getLogger(SERVER_ERROR_LOGGER).addFilter(EXCEPTION_TYPE_ONLY)
