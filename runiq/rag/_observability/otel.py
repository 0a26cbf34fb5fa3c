"""Optional OpenTelemetry spans and metrics, through ``opentelemetry-api`` when it is installed.

runiq never requires OpenTelemetry: the API is imported on first use, and without it every helper
here is a no-op (``pip install 'runiq[otel]'`` adds it). With the API but no SDK configured by the
host, the API's own no-op tracer and meter do the work. runiq only uses the global providers, under
the instrumentation scope ``runiq``; exporting, sampling and the resource are the host's choice.

What reaches a span or a metric is the same content-free set as the observability events: index
names, modes, counts, outcome and error codes, exception class names, the operation id. Never the
query (whatever ``query_visibility`` says), content, metadata, document ids, paths or credentials.
Attribute values come from typed fields (enums, ints, bools) or from the fixed maps below, so a
string from a document or a request has no way in. A failure is recorded by type name only: status
ERROR with the fixed description :data:`ERROR_DESCRIPTION` and an ``error.type`` attribute, never
``record_exception`` (which copies the message and the stack).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import TYPE_CHECKING, Final, Literal

from runiq import __version__
from runiq.errors import RagError
from runiq.logging import get_logger
from runiq.rag._observability.events import IngestionEvent, RetrievalEvent

if TYPE_CHECKING:
    from opentelemetry.metrics import Counter, Histogram
    from opentelemetry.trace import Span, Tracer

    from runiq.rag._context.results import RagRerankingReport

__all__ = [
    "ERROR_DESCRIPTION",
    "FAILED_DOCUMENTS",
    "INGESTED_DOCUMENTS",
    "INGESTION_DURATION",
    "INGESTION_EXCLUDED_FIELDS",
    "INGESTION_FIELDS",
    "IngestionStage",
    "RETRIEVAL_DURATION",
    "RETRIEVAL_EXCLUDED_FIELDS",
    "RETRIEVAL_FIELDS",
    "SCOPE",
    "TelemetrySpan",
    "event_attributes",
    "fusion_span",
    "ingestion_span",
    "record_metrics",
    "rerank_span",
    "retrieval_span",
    "source_span",
    "stage_span",
]

SCOPE: Final = "runiq"  # instrumentation scope of every tracer and meter
ERROR_DESCRIPTION: Final = "runiq operation failed"  # the only status description runiq sets

RETRIEVAL_DURATION: Final = "runiq.retrieval.duration"  # histogram, seconds: index, mode, error.type
INGESTION_DURATION: Final = "runiq.ingestion.duration"  # histogram, seconds: index, reason, state
INGESTED_DOCUMENTS: Final = "runiq.ingestion.documents.ingested"  # counter: added + updated documents
FAILED_DOCUMENTS: Final = "runiq.ingestion.documents.failed"  # counter: failed documents

_INDEX = "runiq.index.name"
_ERROR_TYPE = "error.type"
_ERROR_CODE = "runiq.error.code"

# Which event fields become attributes, and under which names. Everything else is left out on purpose.
RETRIEVAL_FIELDS: Final[Mapping[str, str]] = {
    "index_name": _INDEX,
    "mode": "runiq.retrieval.mode",
    "hit_count": "runiq.retrieval.hits",
    "semantic_candidates": "runiq.retrieval.semantic_candidates",
    "lexical_candidates": "runiq.retrieval.lexical_candidates",
    "fused_candidates": "runiq.retrieval.fused_candidates",
    "error_code": _ERROR_CODE,
}
RETRIEVAL_EXCLUDED_FIELDS: Final = frozenset({"event", "timestamp", "duration_ms", "query", "hits"})
INGESTION_FIELDS: Final[Mapping[str, str]] = {
    "index_name": _INDEX,
    "operation_id": "runiq.ingestion.operation_id",
    "reason": "runiq.ingestion.reason",
    "state": "runiq.ingestion.state",
    "discovered": "runiq.ingestion.documents.discovered",
    "added": "runiq.ingestion.documents.added",
    "updated": "runiq.ingestion.documents.updated",
    "skipped": "runiq.ingestion.documents.skipped",
    "deleted": "runiq.ingestion.documents.deleted",
    "failed": "runiq.ingestion.documents.failed",
    "chunks": "runiq.ingestion.chunks",
    "failure_code": _ERROR_CODE,
    "skipped_files": "runiq.ingestion.files.skipped",
}
INGESTION_EXCLUDED_FIELDS: Final = frozenset({"event", "timestamp", "duration_ms", "failed_document"})

Attribute = str | bool | int | float

log = get_logger(__name__)


class IngestionStage(StrEnum):
    """The stages an ingestion run may report as spans (``runiq.ingestion.<stage>``)."""

    DISCOVER = "discover"  # list the sources and the stored documents, compare hashes
    READ = "read"  # read and load documents
    CHUNK = "chunk"
    EMBED = "embed"
    WRITE = "write"  # replace documents in the store
    DELETE = "delete"  # delete documents gone from every source


@dataclass(frozen=True, slots=True)
class _Instruments:
    tracer: Tracer
    retrieval_duration: Histogram
    ingestion_duration: Histogram
    ingested_documents: Counter
    failed_documents: Counter


@functools.cache
def _instruments() -> _Instruments | None:
    """The tracer and instruments, or None without ``opentelemetry-api``. Imported on first use only."""
    try:
        from opentelemetry import metrics, trace
    except ImportError:
        return None
    meter = metrics.get_meter(SCOPE, __version__)
    return _Instruments(
        tracer=trace.get_tracer(SCOPE, __version__),
        retrieval_duration=meter.create_histogram(RETRIEVAL_DURATION, unit="s", description="Retrieval duration."),
        ingestion_duration=meter.create_histogram(INGESTION_DURATION, unit="s", description="Ingestion run duration."),
        ingested_documents=meter.create_counter(
            INGESTED_DOCUMENTS, unit="{document}", description="Documents added or updated by ingestion."
        ),
        failed_documents=meter.create_counter(
            FAILED_DOCUMENTS, unit="{document}", description="Documents ingestion failed to ingest."
        ),
    )


def event_attributes(event: RetrievalEvent | IngestionEvent) -> dict[str, Attribute]:
    """The attributes an event contributes to a span: the mapped fields that are set."""
    fields = RETRIEVAL_FIELDS if isinstance(event, RetrievalEvent) else INGESTION_FIELDS
    values = ((name, getattr(event, field)) for field, name in fields.items())
    return {name: value for name, value in values if value is not None}


def _error_type(exc: Exception) -> str:
    return type(exc).__name__


class TelemetrySpan:
    """runiq's side of one span: only typed, content-free attributes go in. A no-op without a span."""

    __slots__ = ("_failed", "_prefix", "_span")

    def __init__(self, span: Span | None, prefix: str) -> None:
        self._span = span
        self._prefix = prefix
        self._failed = False

    @property
    def recording(self) -> bool:
        return self._span is not None and self._span.is_recording()

    def counts(self, **values: int) -> None:
        """``counts(candidates=3)`` sets ``<prefix>.candidates = 3``; only ints are accepted."""
        if self._span is None:
            return
        for key, value in values.items():
            if not isinstance(value, int):
                raise TypeError("span counts must be integers")
            self._span.set_attribute(f"{self._prefix}.{key}", value)

    def describe(self, event: RetrievalEvent | IngestionEvent) -> None:
        """The event's content-free fields (:data:`RETRIEVAL_FIELDS`, :data:`INGESTION_FIELDS`)."""
        if self._span is not None:
            self._span.set_attributes(event_attributes(event))

    def describe_rerank(self, report: RagRerankingReport) -> None:
        """The reranking report's outcome, counts and codes: what the ``reranking.*`` log events carry."""
        if self._span is None:
            return
        codes: dict[str, Enum | None] = {
            "outcome": report.outcome,
            "answerability": report.answerability,
            "failure_code": report.failure_code,
            "violation": report.violation,
        }
        attributes: dict[str, Attribute] = {f"runiq.rerank.{k}": v.value for k, v in codes.items() if v is not None}
        attributes.update({"runiq.rerank.ran": report.ran, "runiq.rerank.timed_out": report.timed_out})
        attributes["runiq.rerank.candidates"] = report.candidate_count
        if report.provider is not None:
            attributes["runiq.rerank.provider"] = report.provider
        if report.cause_type is not None:
            attributes["runiq.rerank.cause_type"] = report.cause_type
        self._span.set_attributes(attributes)
        if report.failure_code is not None:  # failed, whether the policy falls back or fails the request
            self.fail(report.failure_code.value)

    def fail(self, error_type: str, code: str | None = None) -> None:
        """Status ERROR with the fixed description; ``error_type`` is a class name or an error code.

        The first failure recorded stands: an exception leaving the span later does not replace it.
        """
        if self._span is None or self._failed:
            return
        self._failed = True
        from opentelemetry.trace import Status, StatusCode

        self._span.set_status(Status(StatusCode.ERROR, ERROR_DESCRIPTION))
        self._span.set_attribute(_ERROR_TYPE, error_type)
        if code is not None:
            self._span.set_attribute(_ERROR_CODE, code)


def _error_code(exc: Exception) -> str | None:
    """A runiq error's stable code (an enum value), if it has one."""
    code = getattr(exc, "code", None) if isinstance(exc, RagError) else None
    return str(code.value) if isinstance(code, Enum) else None


def _tracing() -> bool:
    """Whether a tracer provider is installed. Without one (or with the API's explicit no-op provider) the
    API's tracer makes non-recording spans that carry the current context unchanged, so runiq makes none."""
    if _instruments() is None:
        return False
    from opentelemetry import trace  # imported already: _instruments did

    return not isinstance(trace.get_tracer_provider(), (trace.ProxyTracerProvider, trace.NoOpTracerProvider))


def _span(
    name: str, prefix: str, attributes: Mapping[str, Attribute], *, record: bool = True
) -> AbstractContextManager[TelemetrySpan]:
    if not (record and _tracing()):
        return nullcontext(TelemetrySpan(None, prefix))
    return _recorded_span(name, prefix, attributes)


@contextmanager
def _recorded_span(name: str, prefix: str, attributes: Mapping[str, Attribute]) -> Iterator[TelemetrySpan]:
    instruments = _instruments()
    assert instruments is not None
    with instruments.tracer.start_as_current_span(
        name, attributes=attributes, record_exception=False, set_status_on_exception=False
    ) as span:
        handle = TelemetrySpan(span, prefix)
        try:
            yield handle
        except Exception as exc:
            handle.fail(_error_type(exc), _error_code(exc))
            raise


def retrieval_span(index_name: str) -> AbstractContextManager[TelemetrySpan]:
    """``runiq.retrieval``: one request; the retriever adds its event's fields when it ends."""
    return _span("runiq.retrieval", "runiq.retrieval", {_INDEX: index_name})


def source_span(
    source: Literal["semantic", "lexical"], index_name: str, depth: int
) -> AbstractContextManager[TelemetrySpan]:
    """``runiq.retrieval.semantic`` (query embedding and vector search) or ``runiq.retrieval.lexical``."""
    attributes: dict[str, Attribute] = {_INDEX: index_name, "runiq.retrieval.depth": depth}
    return _span(f"runiq.retrieval.{source}", "runiq.retrieval", attributes)


def fusion_span(index_name: str) -> AbstractContextManager[TelemetrySpan]:
    """``runiq.retrieval.fusion``: reciprocal rank fusion of a hybrid request's two candidate lists."""
    return _span("runiq.retrieval.fusion", "runiq.retrieval", {_INDEX: index_name})


def rerank_span(index_name: str, *, record: bool = True) -> AbstractContextManager[TelemetrySpan]:
    """``runiq.rerank``: resolving, calling and validating the reranker. ``record=False``: no span."""
    return _span("runiq.rerank", "runiq.rerank", {_INDEX: index_name}, record=record)


def ingestion_span(index_name: str, operation_id: str) -> AbstractContextManager[TelemetrySpan]:
    """``runiq.ingestion``: one run; the manager adds its final counters when it ends."""
    attributes: dict[str, Attribute] = {_INDEX: index_name, INGESTION_FIELDS["operation_id"]: operation_id}
    return _span("runiq.ingestion", "runiq.ingestion", attributes)


def stage_span(
    stage: IngestionStage | str, *, index: str, items: int | None = None
) -> AbstractContextManager[TelemetrySpan]:
    """``runiq.ingestion.<stage>`` inside the run's span. ``items``: how many the stage handles.

    More counts as the stage goes: ``span.counts(failed=1)`` sets ``runiq.ingestion.stage.failed``.
    An unknown stage name is a :class:`ValueError` (stage names are a closed set).
    """
    name = IngestionStage(stage)
    attributes: dict[str, Attribute] = {_INDEX: index, "runiq.ingestion.stage.name": name.value}
    if items is not None:
        attributes["runiq.ingestion.stage.items"] = int(items)
    return _span(f"runiq.ingestion.{name.value}", "runiq.ingestion.stage", attributes)


def record_metrics(event: RetrievalEvent | IngestionEvent) -> None:
    """Retrieval duration per index and mode; ingestion duration and document counters per index and reason.

    A failing meter never changes the operation's outcome.
    """
    instruments = _instruments()
    if instruments is None:
        return
    try:
        if isinstance(event, RetrievalEvent):
            attributes: dict[str, Attribute] = {_INDEX: event.index_name, RETRIEVAL_FIELDS["mode"]: event.mode}
            if event.error_code is not None:
                attributes[_ERROR_TYPE] = event.error_code
            instruments.retrieval_duration.record(event.duration_ms / 1000, attributes)
            return
        attributes = {_INDEX: event.index_name, INGESTION_FIELDS["reason"]: event.reason}
        instruments.ingested_documents.add(event.added + event.updated, attributes)
        instruments.failed_documents.add(event.failed, attributes)
        attributes[INGESTION_FIELDS["state"]] = event.state
        instruments.ingestion_duration.record(event.duration_ms / 1000, attributes)
    except Exception as exc:
        log.warning("observability.metrics_failed", error=type(exc).__name__)
