"""The retrieval request."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from runiq.rag._errors import RagValidationError
from runiq.rag._limits import MAX_CANDIDATES, validate_count
from runiq.rag._stores.filters import FilterSpec, validate_filters

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
    registered with another default. ``filters`` is a metadata filter (:mod:`runiq.rag._stores.filters`:
    ``{"team": "hr"}`` for equality, operators such as ``{"year": {"$gte": 2020}}``, ``$and``/``$or``/``$not``),
    validated here: a bad filter is a ``RagValidationError`` when the query is made, and ``filters`` then
    holds the validated :class:`~runiq.rag._stores.filters.MetadataFilter`. ``candidate_depth`` overrides how many
    candidates each hybrid source contributes before fusion. ``top_k`` and ``candidate_depth`` are
    integers from 1 to :data:`~runiq.rag._limits.MAX_CANDIDATES`.
    """

    index_name: str
    text: str
    mode: RagRetrievalMode | None = None
    top_k: int = 5
    filters: FilterSpec | None = None
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
        validate_count(self.top_k, "RagQuery.top_k")
        if self.candidate_depth is not None:
            validate_count(self.candidate_depth, "RagQuery.candidate_depth")
        object.__setattr__(self, "index_name", self.index_name.strip())
        object.__setattr__(self, "filters", validate_filters(self.filters))

    def hybrid_depth(self, multiplier: int) -> int:
        """Candidates each hybrid source contributes: ``candidate_depth``, else ``top_k * multiplier``
        capped at ``MAX_CANDIDATES`` (so a valid query never asks a store for more than it accepts)."""
        return self.candidate_depth or min(self.top_k * multiplier, MAX_CANDIDATES)
