"""Unexpected exceptions on a real uvicorn server: a fixed 500 (or a closed connection once a response
has started), and nothing but the exception's type in any log, whatever raised it and wherever.

Every stdlib record from every logger (uvicorn.error, uvicorn.access, root, ...; captured where it
reaches its handlers, so loggers that do not propagate are included), every structlog event,
every OpenTelemetry log record FastAPI would export, and everything written to stdout/stderr is
searched for the canary raised in the exception message.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import structlog
from fastapi import FastAPI
from fastapi.responses import StreamingResponse
from opentelemetry._logs import Logger, LoggerProvider
from opentelemetry._logs import _internal as otel_logs
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from runiq.rag import RagIngestionManager
from runiq.rag.testing import CANARY
from runiq_dashboard import AccessOutcome, DashboardOptions, DashboardRole

INTERNAL_ERROR = {
    "code": "InternalError",
    "message": "The dashboard could not complete the request.",
    "activeOperation": None,
}


class CanaryError(RuntimeError):
    """Carries the canary in its message, as a driver error quoting a document or DSN would."""


class EscapingError(BaseException):
    """Not an ``Exception``: no handler in the app may catch it, so it reaches uvicorn itself."""


def _raise(*_: Any, **__: Any) -> Any:
    raise CanaryError(f"backend said {CANARY}")


class _RecordingOtelLogger(Logger):
    def __init__(self, emitted: list[dict[str, Any]]) -> None:
        super().__init__("recording")
        self._emitted = emitted

    def emit(self, record: Any = None, **fields: Any) -> None:  # type: ignore[override]
        self._emitted.append({"record": record, **fields})

    def enabled(self, **_: Any) -> bool:  # type: ignore[override]
        return True


class _RecordingOtelProvider(LoggerProvider):
    """A configured OpenTelemetry logs pipeline: FastAPI's native telemetry exports exceptions to it."""

    def __init__(self) -> None:
        self.emitted: list[dict[str, Any]] = []

    def get_logger(self, *_: Any, **__: Any) -> Logger:
        return _RecordingOtelLogger(self.emitted)


@dataclass
class Captured:
    records: list[logging.LogRecord] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    otel: _RecordingOtelProvider = field(default_factory=_RecordingOtelProvider)


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> Iterator[Captured]:
    capture = Captured()
    handle = logging.Logger.callHandlers

    def call_handlers(self: logging.Logger, record: logging.LogRecord) -> None:
        capture.records.append(record)
        handle(self, record)

    caplog.set_level(logging.DEBUG)  # every logger without its own level logs everything
    monkeypatch.setattr(logging.Logger, "callHandlers", call_handlers)
    monkeypatch.setattr(otel_logs, "_LOGGER_PROVIDER", capture.otel)
    with structlog.testing.capture_logs() as events:
        capture.events = events
        yield capture


class _RaisingPolicy:
    async def authorize(self, request: Any, role: DashboardRole) -> AccessOutcome:
        _raise()
        return AccessOutcome.ALLOWED  # pragma: no cover


class _RaiseBeforeResponse:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            _raise()
        await self.app(scope, receive, send)  # pragma: no cover


class _RaiseMidResponse:
    """Lets the response start, then fails on its body: too late for any 500."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def failing_send(message: Message) -> None:
            if message["type"] == "http.response.body":
                _raise()
            await send(message)

        await self.app(scope, receive, failing_send)


async def _failing_stream() -> AsyncIterator[bytes]:
    yield b"partial "
    _raise()


def _add_routes(app: FastAPI) -> None:
    @app.get("/test/stream")
    async def stream() -> StreamingResponse:
        return StreamingResponse(_failing_stream(), media_type="text/plain")

    @app.get("/test/escape")
    async def escape() -> None:
        raise EscapingError(f"escaped with {CANARY}")


# (id, how the failure is planted, path, expected outcome, expected logged type)
Plant = Callable[[pytest.MonkeyPatch, FastAPI], None]
INDEXES = "/runiq/api/rag/indexes"
FAILURES: list[tuple[str, Plant, str, int | None, str]] = [
    ("route", lambda mp, app: mp.setattr(RagIngestionManager, "status", _raise), INDEXES, 500, "CanaryError"),
    ("middleware", lambda mp, app: app.add_middleware(_RaiseBeforeResponse), INDEXES, 500, "CanaryError"),
    ("after-response-start", lambda mp, app: app.add_middleware(_RaiseMidResponse), "/runiq/", None, "CanaryError"),
    ("streaming", lambda mp, app: None, "/test/stream", None, "CanaryError"),
    ("base-exception", lambda mp, app: None, "/test/escape", 500, "EscapingError"),
]


@pytest.mark.parametrize(
    ("plant", "path", "status", "logged_type"),
    [case[1:] for case in FAILURES],
    ids=[case[0] for case in FAILURES],
)
async def test_unexpected_exceptions_log_their_type_only(
    server_factory: Callable[..., Any],
    captured: Captured,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    plant: Plant,
    path: str,
    status: int | None,
    logged_type: str,
) -> None:
    """No record, event, OpenTelemetry log or console line holds the exception's message or traceback."""
    server = server_factory(log_level="debug")
    _add_routes(server.server.app)
    plant(monkeypatch, server.server.app)
    server.start()
    try:
        async with httpx.AsyncClient() as client:
            if status is None:  # the response had started: the connection is cut, never completed
                with pytest.raises(httpx.RemoteProtocolError):
                    await client.get(server.url.removesuffix("/runiq/") + path)
            else:
                response = await client.get(server.url.removesuffix("/runiq/") + path)
                assert response.status_code == status
                assert CANARY not in response.text
                if logged_type != "EscapingError":  # uvicorn's own plain 500 for non-Exceptions
                    assert response.json() == INTERNAL_ERROR
                    assert response.headers["cache-control"] == "no-store"
    finally:
        server.stop()
    out, err = capfd.readouterr()

    for record in captured.records:
        rendered = logging.Formatter().format(record)
        assert CANARY not in rendered, record.name
        assert record.exc_info is None, rendered
        assert record.stack_info is None, rendered
    assert captured.records, "the server logged nothing at debug level: the capture is not working"
    for event in captured.events:
        assert CANARY not in repr(event)
        assert not {"exc_info", "exception", "stack_info"} & set(event)
    assert captured.otel.emitted == []
    assert CANARY not in out + err
    assert "Traceback" not in out + err
    if logged_type == "EscapingError":  # reached uvicorn: its record names the type and nothing else
        [escaped] = [r for r in captured.records if r.name == "uvicorn.error" and logged_type in r.getMessage()]
        assert escaped.levelno == logging.ERROR
    else:  # contained by the dashboard: it never reached uvicorn; one structured event with the type
        assert not [r for r in captured.records if "Exception in ASGI application" in r.getMessage()]
        assert [(e["event"], e["error"]) for e in captured.events if e["log_level"] == "error"] == [
            ("dashboard.request_failed", logged_type)
        ]


async def test_a_failing_access_policy_logs_its_type_only(
    server_factory: Callable[..., Any], captured: Captured
) -> None:
    """Exceptions raised in the access dependency are contained the same way."""
    server = server_factory(DashboardOptions(access_policy=_RaisingPolicy())).start()
    try:
        async with httpx.AsyncClient() as client:
            response = await client.get(server.url + "api/rag/indexes")
    finally:
        server.stop()
    assert response.status_code == 500
    assert response.json() == INTERNAL_ERROR
    assert all(CANARY not in logging.Formatter().format(r) for r in captured.records)
    assert all(r.exc_info is None for r in captured.records)
    assert [e["error"] for e in captured.events if e["log_level"] == "error"] == ["CanaryError"]


async def test_queries_and_their_hits_are_never_logged(
    server_factory: Callable[..., Any], captured: Captured, capfd: pytest.CaptureFixture[str]
) -> None:
    """The query endpoint logs neither the query text nor the chunk text (here both hold the canary):
    not in a record, an event, or a console line, whether the query succeeds, is invalid or is refused.
    runiq's own retrieval event carries the query as RagQueryVisibility says (redacted and bounded by
    default), and only there."""
    options = DashboardOptions(enable_query=True, query_rate_limit=3)
    server = server_factory(options, log_level="debug").start()
    query = f"policy {CANARY}"
    try:
        async with httpx.AsyncClient(base_url=server.url) as client:
            assert (await client.post("api/rag/indexes/docs/ingestion/start")).status_code == 202
            for _ in range(100):
                if (await client.get("api/rag/indexes/docs/status")).json()["activeOperation"] is None:
                    break
                await asyncio.sleep(0.05)
            answered = await client.post("api/rag/indexes/docs/query", json={"text": query, "mode": "hybrid"})
            assert CANARY in answered.text  # the hits' content
            invalid = await client.post("api/rag/indexes/docs/query", json={"text": query, "top_k": 0})
            never_ingested = await client.post("api/rag/indexes/broken/query", json={"text": query})
            limited = await client.post("api/rag/indexes/docs/query", json={"text": query})
    finally:
        server.stop()
    assert (answered.status_code, invalid.status_code, never_ingested.status_code) == (200, 422, 409)
    assert limited.status_code == 429
    out, err = capfd.readouterr()
    for record in captured.records:
        assert CANARY not in logging.Formatter().format(record), record.name
    assert captured.records, "the server logged nothing at debug level: the capture is not working"
    for event in captured.events:
        shown = {k: v for k, v in event.items() if not (k == "query" and event["event"].startswith("retrieval."))}
        assert CANARY not in repr(shown), event["event"]
    assert any(e["event"] == "retrieval.completed" for e in captured.events)
    assert CANARY not in out + err
