"""Content-free observability: options, the redactor, projection rules and typed events."""

from __future__ import annotations

from runiq.rag._observability.events import (
    IngestionEvent,
    ObservabilityRecorder,
    ObservabilitySink,
    RetrievalEvent,
    RetrievalHitPreview,
)
from runiq.rag._observability.options import (
    ContentPreviewOptions,
    RagObservabilityOptions,
    RagQueryVisibility,
)
from runiq.rag._observability.projection import ObservabilityProjector, normalise, truncate_graphemes
from runiq.rag._observability.redaction import (
    DefaultObservabilityRedactor,
    RagObservabilityRedactor,
    RagObservabilityValueKind,
)

__all__ = [
    "ContentPreviewOptions",
    "DefaultObservabilityRedactor",
    "IngestionEvent",
    "ObservabilityProjector",
    "ObservabilityRecorder",
    "ObservabilitySink",
    "RagObservabilityOptions",
    "RagObservabilityRedactor",
    "RagObservabilityValueKind",
    "RagQueryVisibility",
    "RetrievalEvent",
    "RetrievalHitPreview",
    "normalise",
    "truncate_graphemes",
]
