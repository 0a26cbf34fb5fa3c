"""Frozen, validated index definitions: what registration produces and the runtime consumes."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, SecretBytes, SecretStr

from runiq.plugins.registry import ProviderKind
from runiq.rag._chunking.base import ChunkingOptions
from runiq.rag._embeddings.batching import (
    DEFAULT_EMBEDDING_BATCH_SIZE,
    DEFAULT_EMBEDDING_CONCURRENCY,
    DEFAULT_EMBEDDING_TIMEOUT_SECONDS,
)
from runiq.rag._errors import IndexNotFoundError
from runiq.rag._ingestion.strategies import IngestionStrategy
from runiq.rag._retrieval.query import RagRetrievalMode
from runiq.rag._sources.base import DocumentSource
from runiq.rag._stores.base import DistanceMetric

__all__ = ["IndexDefinition", "IndexRegistry", "ProviderReference"]


def _reveal(value: Any) -> Any:
    if isinstance(value, SecretStr | SecretBytes):
        return value.get_secret_value()
    if isinstance(value, Mapping):
        return {k: _reveal(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_reveal(v) for v in value]
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderReference:
    """A provider chosen for an index: registered name plus validated options. Nothing is constructed."""

    kind: ProviderKind
    name: str
    options: BaseModel
    display_name: str

    @property
    def instance_key(self) -> str:
        """Indexes whose references share this key share one live provider (one pool per DSN)."""
        payload = _reveal(self.options.model_dump())
        return json.dumps([self.kind.value, self.name, payload], sort_keys=True, default=str)


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexDefinition:
    name: str
    sources: tuple[DocumentSource, ...]
    embedding: ProviderReference | None
    vector_store: ProviderReference
    reranker: ProviderReference | None = None
    reranker_approved: bool = False
    metric: DistanceMetric = DistanceMetric.COSINE
    chunking: ChunkingOptions = ChunkingOptions()
    ingestion: IngestionStrategy = IngestionStrategy()
    default_mode: RagRetrievalMode = RagRetrievalMode.SEMANTIC
    embedding_batch_size: int = DEFAULT_EMBEDDING_BATCH_SIZE
    embedding_concurrency: int = DEFAULT_EMBEDDING_CONCURRENCY
    embedding_timeout_seconds: float = DEFAULT_EMBEDDING_TIMEOUT_SECONDS


class IndexRegistry:
    """The immutable name -> definition mapping, in registration order."""

    def __init__(self, definitions: tuple[IndexDefinition, ...]) -> None:
        self._definitions = {d.name: d for d in definitions}

    def __iter__(self) -> Iterator[IndexDefinition]:
        return iter(self._definitions.values())

    def __len__(self) -> int:
        return len(self._definitions)

    def __contains__(self, name: object) -> bool:
        return name in self._definitions

    def get(self, name: str) -> IndexDefinition:
        definition = self._definitions.get(name)
        if definition is None:
            raise IndexNotFoundError(name)
        return definition

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._definitions)
