"""Observability options. Validated on construction, so a bad configuration fails at registration."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from runiq.errors import RagConfigurationError

__all__ = [
    "MAXIMUM_CONTENT_PREVIEW_CHARACTERS",
    "MAXIMUM_METADATA_ENTRIES",
    "MAXIMUM_METADATA_VALUE_CHARACTERS",
    "ContentPreviewOptions",
    "RagObservabilityOptions",
    "RagQueryVisibility",
]

MAXIMUM_CONTENT_PREVIEW_CHARACTERS = 2000
MAXIMUM_METADATA_ENTRIES = 32
MAXIMUM_METADATA_VALUE_CHARACTERS = 512


class RagQueryVisibility(StrEnum):
    HIDDEN = "hidden"  # the query is omitted from every payload
    VISIBLE = "visible"  # redacted, normalised and bounded (the default)
    REDACTED = "redacted"  # a fixed placeholder stands in for the query


@dataclass(frozen=True, slots=True, kw_only=True)
class ContentPreviewOptions:
    """Opt-in previews of chunk content for local development. Off by default."""

    enabled: bool = False
    maximum_characters: int = 240
    include_selected_results: bool = False
    include_rejected_results: bool = False

    def __post_init__(self) -> None:
        if not 0 < self.maximum_characters <= MAXIMUM_CONTENT_PREVIEW_CHARACTERS:
            raise RagConfigurationError(
                f"Content preview maximum_characters must be between 1 and {MAXIMUM_CONTENT_PREVIEW_CHARACTERS}."
            )
        flags = self.include_selected_results or self.include_rejected_results
        if flags and not self.enabled:
            raise RagConfigurationError("Result preview flags require content_preview.enabled.")
        if self.enabled and not flags:
            raise RagConfigurationError(
                "An enabled content preview needs include_selected_results or include_rejected_results."
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class RagObservabilityOptions:
    query_visibility: RagQueryVisibility = RagQueryVisibility.VISIBLE
    redacted_query_placeholder: str = "[REDACTED]"
    maximum_query_characters: int = 512
    safe_metadata_keys: frozenset[str] = field(default_factory=frozenset)
    metadata_entry_limit: int = 8
    maximum_metadata_value_length: int = 128
    content_preview: ContentPreviewOptions = field(default_factory=ContentPreviewOptions)

    def __post_init__(self) -> None:
        if not isinstance(self.query_visibility, RagQueryVisibility):
            raise RagConfigurationError("query_visibility must be a RagQueryVisibility.")
        if self.maximum_query_characters <= 0:
            raise RagConfigurationError("maximum_query_characters must be greater than zero.")
        if not self.redacted_query_placeholder.strip():
            raise RagConfigurationError("redacted_query_placeholder must not be blank.")
        if not 0 <= self.metadata_entry_limit <= MAXIMUM_METADATA_ENTRIES:
            raise RagConfigurationError(f"metadata_entry_limit must be between 0 and {MAXIMUM_METADATA_ENTRIES}.")
        if not 1 <= self.maximum_metadata_value_length <= MAXIMUM_METADATA_VALUE_CHARACTERS:
            raise RagConfigurationError(
                f"maximum_metadata_value_length must be between 1 and {MAXIMUM_METADATA_VALUE_CHARACTERS}."
            )
        object.__setattr__(self, "safe_metadata_keys", frozenset(self.safe_metadata_keys))
        if any(not isinstance(k, str) or not k.strip() for k in self.safe_metadata_keys):
            raise RagConfigurationError("safe_metadata_keys must not contain blank keys.")
