"""The retrieval request."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from runiq.rag.documents import MetadataValue
from runiq.rag.errors import RagValidationError
from runiq.rag.stores.filters import validate_filters

__all__ = ["MAX_QUERY_CHARACTERS", "RagQuery", "RagRetrievalMode"]

MAX_QUERY_CHARACTERS = 16_384


class RagRetrievalMode(StrEnum):
    """``SEMANTIC`` embeds the query and searches vectors only; ``LEXICAL`` searches the lexical index only
    and needs no embedding client; ``HYBRID`` runs both and fuses them with reciprocal rank fusion."""

    SEMANTIC = "semantic"
    LEXICAL = "lexical"
    HYBRID = "hybrid"


@dataclass(frozen=True, slots=True, kw_only=True)
class RagQuery:
    """A retrieval request. ``top_k`` is a candidate limit only, not an acceptance rule.

    ``mode=None`` means the index's default mode, which is ``SEMANTIC`` unless the index was
    registered with another default. ``filters`` are metadata equality filters, AND-combined, with
    the equality of :mod:`runiq.rag.stores.filters`. ``candidate_depth`` overrides how many
    candidates each hybrid source contributes before fusion.
    """

    index_name: str
    text: str
    mode: RagRetrievalMode | None = None
    top_k: int = 5
    filters: Mapping[str, MetadataValue] | None = None
    candidate_depth: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.index_name, str) or not self.index_name.strip():
            raise RagValidationError("RagQuery.index_name must be a non-empty string.")
        if not isinstance(self.text, str) or not self.text.strip():
            raise RagValidationError("RagQuery.text must be a non-empty string.")
        if len(self.text) > MAX_QUERY_CHARACTERS:
            raise RagValidationError(f"RagQuery.text must be at most {MAX_QUERY_CHARACTERS} characters.")
        if self.mode is not None and not isinstance(self.mode, RagRetrievalMode):
            raise RagValidationError("RagQuery.mode must be a RagRetrievalMode.")
        if isinstance(self.top_k, bool) or not isinstance(self.top_k, int) or self.top_k <= 0:
            raise RagValidationError("RagQuery.top_k must be a positive integer.")
        if self.candidate_depth is not None and (
            isinstance(self.candidate_depth, bool)
            or not isinstance(self.candidate_depth, int)
            or self.candidate_depth <= 0
        ):
            raise RagValidationError("RagQuery.candidate_depth must be a positive integer.")
        object.__setattr__(self, "index_name", self.index_name.strip())
        object.__setattr__(self, "filters", validate_filters(self.filters))
