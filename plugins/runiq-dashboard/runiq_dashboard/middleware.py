"""The two pure ASGI layers around the whole dashboard application (outside FastAPI's own stack).

:class:`ContainFailures` is where every exception that escapes the application ends: its routes, its
dependencies, its middleware, its exception handlers, a streaming body. Starlette's error middleware
sends the fixed 500 and then re-raises "so that servers can log the error"; uvicorn would log the
message and the traceback. Here the exception is logged by type only and not re-raised. When no
response has started, the fixed 500 goes out; once one has, the response is left incomplete and the
server closes the connection, so a client cannot mistake a truncated body for a whole one.

:class:`SecurityHeaders` wraps it, so every response, that 500 included, is never cached or framed.
"""

from __future__ import annotations

from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from runiq.logging import get_logger
from runiq_dashboard.problems import internal_error

__all__ = ["ContainFailures", "SecurityHeaders", "around_application"]

log = get_logger(__name__)

_SECURITY_HEADERS = [
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]


def around_application(app: ASGIApp) -> ASGIApp:
    return SecurityHeaders(ContainFailures(app))


class ContainFailures:
    """Logs an escaping exception as ``dashboard.request_failed`` with its type, and nothing else."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):  # lifespan failures must reach the server
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = True  # the first message of any response starts it
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:
            log.error("dashboard.request_failed", error=_type_name(exc))
            if not started and scope["type"] == "http":
                await internal_error().response()(scope, receive, send)


def _type_name(exc: BaseException) -> str:
    # A task group (a streaming response's) wraps the one exception that failed it.
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return type(exc).__name__


class SecurityHeaders:
    """Responses are never cached and never framed."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers: list[Any] = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers.extend(h for h in _SECURITY_HEADERS if h[0] not in present)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
