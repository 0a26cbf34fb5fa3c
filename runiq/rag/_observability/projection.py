"""Projection rules: redact first, then normalise whitespace and control characters, then truncate
to a number of grapheme clusters, ending in an ellipsis. A failing redactor omits the value.

A redactor never sees the whole of a long value, only a bounded prefix: its cost grows with its
input, a query can be megabytes long, and at most ``maximum`` grapheme clusters are shown anyway.
A value longer than ``maximum + REDACTION_MARGIN`` code points is cut at its last word boundary
within that many: whitespace, but never a single space between two digits (the default redactor
reads ``4111 1111 ...`` as one number). The shown text then ends in an ellipsis. Cutting between
words means no secret the default redactor knows straddles the cut, so none is shown in part: its
rules match no whitespace except inside such a number and around the ``=`` of ``password = value``,
where the cut leaves the value out. A word that straddles the limit is left out whole. A custom
redactor whose rules span words (names, addresses) sees the value cut the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import regex

from runiq.logging import get_logger
from runiq.rag._documents import MetadataValue
from runiq.rag._observability.options import RagObservabilityOptions, RagQueryVisibility
from runiq.rag._observability.redaction import (
    DefaultObservabilityRedactor,
    RagObservabilityRedactor,
    RagObservabilityValueKind,
)

__all__ = ["REDACTION_MARGIN", "ObservabilityProjector", "bounded_prefix", "normalise", "truncate_graphemes"]

log = get_logger(__name__)

# Whitespace, control (Cc) and format (Cf) code points collapse to one space. ZWJ (U+200D) is Cf but
# joins emoji sequences, so it is kept inside grapheme clusters.
_SEPARATORS = regex.compile(r"[[\s\p{Cc}\p{Cf}]--[\u200d]]+", flags=regex.V1)
# The same set for ASCII text (which has no Cf code points), with ``re``: many times faster.
_ASCII_SEPARATORS = re.compile(r"[\s\x00-\x1f\x7f]+")
_GRAPHEME = regex.compile(r"\X")
ELLIPSIS = "\u2026"
REDACTION_MARGIN = 64  # code points past ``maximum`` a redactor sees: room for the word that straddles it
# The last whitespace, not a single space between two digits, before the window's last character (the
# window is one character longer than the limit, so the lookahead sees the real next character).
# Greedy ``.*`` backtracks from the end once: linear.
_LAST_BOUNDARY = re.compile(r"(?s).*(?:[^\S ]|(?<!\d) | (?!\d))(?=.)")


def normalise(value: str) -> str:
    separators = _ASCII_SEPARATORS if value.isascii() else _SEPARATORS
    return str(separators.sub(" ", value)).strip()


def truncate_graphemes(value: str, maximum: int, *, cut: bool = False) -> tuple[str, bool]:
    """Keep at most ``maximum`` grapheme clusters; when cut, the last one is an ellipsis.

    ``cut``: the value is already the start of a longer one, so it ends in an ellipsis in any case.
    """
    # Every ASCII character but CR LF is a cluster of its own; segmenting is the costly part.
    clusters = value if value.isascii() and "\r\n" not in value else _GRAPHEME.findall(value)
    if len(clusters) <= maximum and not cut:
        return value, False
    return "".join(clusters[: max(min(len(clusters), maximum - 1), 0)]) + ELLIPSIS, True


class ObservabilityProjector:
    """Applies :class:`RagObservabilityOptions` to values that may reach logs or client payloads."""

    def __init__(
        self, options: RagObservabilityOptions | None = None, redactor: RagObservabilityRedactor | None = None
    ):
        self.options = options or RagObservabilityOptions()
        self._redactor = redactor or DefaultObservabilityRedactor()

    def _redact(self, value: str, kind: RagObservabilityValueKind, maximum: int) -> str | None:
        """The value as shown: redacted from a bounded prefix, normalised, at most ``maximum`` clusters."""
        prefix = bounded_prefix(value, maximum + REDACTION_MARGIN)
        redacted = self._redacted(prefix, kind)
        return None if redacted is None else _shown(redacted, maximum, cut=len(prefix) < len(value))

    def _redacted(self, value: str, kind: RagObservabilityValueKind) -> str | None:
        try:
            redacted = self._redactor.redact(value, kind)
        except Exception as exc:  # never fall back to the raw value
            log.warning("observability.redactor_failed", kind=kind.value, error=type(exc).__name__)
            return None
        return redacted if isinstance(redacted, str) else None

    def query(self, text: str) -> str | None:
        visibility = self.options.query_visibility
        if visibility is RagQueryVisibility.HIDDEN:
            return None
        if visibility is RagQueryVisibility.REDACTED:
            return self.options.redacted_query_placeholder
        return self._redact(text, RagObservabilityValueKind.QUERY, self.options.maximum_query_characters)

    def preview(self, content: str, *, selected: bool) -> str | None:
        preview = self.options.content_preview
        wanted = preview.include_selected_results if selected else preview.include_rejected_results
        if not preview.enabled or not wanted or not content:
            return None
        return self._redact(content, RagObservabilityValueKind.CONTENT, preview.maximum_characters)

    def metadata(self, values: Mapping[str, MetadataValue]) -> dict[str, str]:
        options = self.options
        if not values or options.metadata_entry_limit == 0:
            return {}
        projected: dict[str, str] = {}
        for key in sorted(k for k in values if k in options.safe_metadata_keys):
            if len(projected) >= options.metadata_entry_limit:
                break
            value = self._redact(
                str(values[key]), RagObservabilityValueKind.METADATA, options.maximum_metadata_value_length
            )
            if value:
                projected[key] = value
        return projected


def bounded_prefix(value: str, limit: int) -> str:
    """``value`` if it has at most ``limit`` code points, else its start up to the last word boundary
    within ``limit`` (empty when there is none): the input a redactor is given."""
    if len(value) <= limit:
        return value
    boundary = _LAST_BOUNDARY.match(value, 0, limit + 2)
    return value[: boundary.end() - 1] if boundary else ""


def _shown(redacted: str, maximum: int, *, cut: bool) -> str | None:
    value = normalise(redacted)
    if not value:
        return ELLIPSIS if cut else None
    return truncate_graphemes(value, maximum, cut=cut)[0]
