"""Projection rules: redact first, then normalise whitespace and control characters, then truncate
to a number of grapheme clusters, ending in an ellipsis. A failing redactor omits the value."""

from __future__ import annotations

from collections.abc import Mapping

import regex
import structlog

from runiq.rag.documents import MetadataValue
from runiq.rag.observability.options import RagObservabilityOptions, RagQueryVisibility
from runiq.rag.observability.redaction import (
    DefaultObservabilityRedactor,
    RagObservabilityRedactor,
    RagObservabilityValueKind,
)

__all__ = ["ObservabilityProjector", "normalise", "truncate_graphemes"]

log = structlog.get_logger(__name__)

# Whitespace, control (Cc) and format (Cf) code points collapse to one space. ZWJ (U+200D) is Cf but
# joins emoji sequences, so it is kept inside grapheme clusters.
_SEPARATORS = regex.compile(r"[[\s\p{Cc}\p{Cf}]--[\u200d]]+", flags=regex.V1)
_GRAPHEME = regex.compile(r"\X")
ELLIPSIS = "\u2026"


def normalise(value: str) -> str:
    return str(_SEPARATORS.sub(" ", value)).strip()


def truncate_graphemes(value: str, maximum: int) -> tuple[str, bool]:
    """Keep at most ``maximum`` grapheme clusters; when cut, the last one is an ellipsis."""
    clusters = _GRAPHEME.findall(value)
    if len(clusters) <= maximum:
        return value, False
    return "".join(clusters[: max(maximum - 1, 0)]) + ELLIPSIS, True


class ObservabilityProjector:
    """Applies :class:`RagObservabilityOptions` to values that may reach logs or client payloads."""

    def __init__(
        self, options: RagObservabilityOptions | None = None, redactor: RagObservabilityRedactor | None = None
    ):
        self.options = options or RagObservabilityOptions()
        self._redactor = redactor or DefaultObservabilityRedactor()

    def _redact(self, value: str, kind: RagObservabilityValueKind) -> str | None:
        try:
            redacted = self._redactor.redact(value, kind)
        except Exception as exc:  # never fall back to the raw value
            log.warning("observability.redactor_failed", kind=kind.value, error=type(exc).__name__)
            return None
        if redacted is None or not redacted.strip():
            return None
        return normalise(redacted) or None

    def query(self, text: str) -> str | None:
        visibility = self.options.query_visibility
        if visibility is RagQueryVisibility.HIDDEN:
            return None
        if visibility is RagQueryVisibility.REDACTED:
            return self.options.redacted_query_placeholder
        value = self._redact(text, RagObservabilityValueKind.QUERY)
        return None if value is None else truncate_graphemes(value, self.options.maximum_query_characters)[0]

    def preview(self, content: str, *, selected: bool) -> str | None:
        preview = self.options.content_preview
        wanted = preview.include_selected_results if selected else preview.include_rejected_results
        if not preview.enabled or not wanted or not content:
            return None
        value = self._redact(content, RagObservabilityValueKind.CONTENT)
        return None if value is None else truncate_graphemes(value, preview.maximum_characters)[0]

    def metadata(self, values: Mapping[str, MetadataValue]) -> dict[str, str]:
        options = self.options
        if not values or options.metadata_entry_limit == 0:
            return {}
        projected: dict[str, str] = {}
        for key in sorted(k for k in values if k in options.safe_metadata_keys):
            if len(projected) >= options.metadata_entry_limit:
                break
            value = self._redact(str(values[key]), RagObservabilityValueKind.METADATA)
            if value:
                projected[key] = truncate_graphemes(value, options.maximum_metadata_value_length)[0]
        return projected
