"""Typed, content-free event payloads and where they go.

Fields are safe by construction: index names, modes, counts, durations, outcome codes, hashed
identities (:func:`~runiq.rag._observability.identity.identity_hash`). The only optional text fields
are the projected query and previews, which have already passed the redactor, normalisation and
truncation (and exist only when the options allow them). Events are logged through structlog and
handed to every registered :class:`ObservabilitySink`; the :class:`ObservabilityRecorder` sink keeps
the latest per index for client payloads (a dashboard).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from runiq.logging import get_logger

__all__ = [
    "IngestionEvent",
    "ObservabilityRecorder",
    "ObservabilitySink",
    "RetrievalEvent",
    "RetrievalHitPreview",
    "emit",
]

log = get_logger("runiq.rag.observability")


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class RetrievalHitPreview:
    """A selected hit as observability may show it: hashed identity, scores, optional preview."""

    rank: int
    identity: str
    raw_score: float | None
    relevance: float | None
    semantic_rank: int | None
    lexical_rank: int | None
    preview: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class RetrievalEvent:
    event: str  # "retrieval.completed" | "retrieval.failed"
    index_name: str
    mode: str
    duration_ms: float
    hit_count: int = 0
    semantic_candidates: int | None = None
    lexical_candidates: int | None = None
    fused_candidates: int | None = None
    error_code: str | None = None
    query: str | None = None
    hits: tuple[RetrievalHitPreview, ...] = ()
    timestamp: datetime = field(default_factory=_now)


@dataclass(frozen=True, slots=True, kw_only=True)
class IngestionEvent:
    event: str  # "ingestion.finished"
    index_name: str
    operation_id: str
    reason: str
    state: str
    duration_ms: float
    discovered: int
    added: int
    updated: int
    skipped: int
    deleted: int
    failed: int
    chunks: int
    failure_code: str | None = None
    failed_document: str | None = None  # identity_hash of the document the last failure names, if any
    skipped_files: int = 0  # files no loader reads; not documents
    timestamp: datetime = field(default_factory=_now)


Event = RetrievalEvent | IngestionEvent


@runtime_checkable
class ObservabilitySink(Protocol):
    def emit(self, event: RetrievalEvent | IngestionEvent) -> None: ...


class ObservabilityRecorder:
    """Keeps the latest retrieval and ingestion event per index (in memory, reset on restart)."""

    def __init__(self) -> None:
        self.last_retrieval: dict[str, RetrievalEvent] = {}
        self.last_ingestion: dict[str, IngestionEvent] = {}

    def emit(self, event: RetrievalEvent | IngestionEvent) -> None:
        if isinstance(event, RetrievalEvent):
            self.last_retrieval[event.index_name] = event
        else:
            self.last_ingestion[event.index_name] = event


def _fields(event: Event) -> dict[str, Any]:
    """The logged fields: those set, hit previews as plain dicts (what ``dataclasses.asdict`` gives, without
    deep-copying every scalar)."""
    values: dict[str, Any] = {}
    names = _LOGGED_FIELDS.get(type(event))
    if names is None:  # a subclass: its own fields
        names = _LOGGED_FIELDS[type(event)] = _logged_fields(event)
    for name in names:
        value = getattr(event, name)
        if value is None or value == ():
            continue
        if isinstance(value, tuple):
            value = tuple(dataclasses.asdict(item) for item in value)
        values[name] = value
    return values


def _logged_fields(event: Event | type[Event]) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(event) if f.name not in ("event", "timestamp"))


_LOGGED_FIELDS: dict[type, tuple[str, ...]] = {kind: _logged_fields(kind) for kind in (RetrievalEvent, IngestionEvent)}


def emit(event: Event, sinks: Iterable[ObservabilitySink]) -> None:
    """Log the event and hand it to each sink; a failing sink never changes the operation's outcome."""
    log.info(event.event, **_fields(event))
    for sink in sinks:
        try:
            sink.emit(event)
        except Exception as exc:
            log.warning("observability.sink_failed", sink=type(sink).__name__, error=type(exc).__name__)
