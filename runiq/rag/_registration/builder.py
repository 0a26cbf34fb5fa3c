"""The fluent registration API: ``RagBuilder.add_index(name, configure)`` and ``IndexBuilder``.

Registration validates everything it can at once and stores frozen definitions. It scans no files,
opens no connection and starts no task: provider factories run when the host first needs them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol, Self, runtime_checkable

from runiq.errors import call_translated, replacing
from runiq.plugins.registry import ProviderKind, ProviderRegistry
from runiq.rag._chunking.base import ChunkingOptions
from runiq.rag._documents import RagDocument
from runiq.rag._embeddings.batching import (
    DEFAULT_EMBEDDING_BATCH_SIZE,
    DEFAULT_EMBEDDING_CONCURRENCY,
    DEFAULT_EMBEDDING_TIMEOUT_SECONDS,
    embedding_timeout,
)
from runiq.rag._errors import RagConfigurationError
from runiq.rag._ingestion.strategies import IngestionBuilder, IngestionStrategy
from runiq.rag._loaders.pool import DEFAULT_MAX_FILE_BYTES
from runiq.rag._loaders.registry import LoaderRegistry
from runiq.rag._observability.events import ObservabilitySink
from runiq.rag._observability.options import RagObservabilityOptions
from runiq.rag._observability.redaction import DefaultObservabilityRedactor, RagObservabilityRedactor
from runiq.rag._registration.definitions import IndexDefinition, ProviderReference
from runiq.rag._retrieval.query import RagRetrievalMode
from runiq.rag._retrieval.scope import RetrievalScopeProvider
from runiq.rag._sources.base import DocumentSource
from runiq.rag._sources.directory import DirectorySource
from runiq.rag._sources.memory import InMemorySource
from runiq.rag._sources.selection import DEFAULT_PATTERN
from runiq.rag._stores.base import DistanceMetric

__all__ = ["INDEX_NAME_PATTERN", "IndexBuilder", "ProviderSelection", "RagBuilder"]

INDEX_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


@runtime_checkable
class ProviderSelection(Protocol):
    """A typed provider choice exported by a plugin (``HashingEmbedding()``, ``OpenAiEmbedding(...)``)."""

    @property
    def provider_name(self) -> str: ...

    @property
    def display_name(self) -> str: ...

    def provider_options(self) -> Mapping[str, object]: ...


def validate_index_name(name: object) -> str:
    if not isinstance(name, str) or not INDEX_NAME_PATTERN.match(name.strip()):
        raise RagConfigurationError(
            "RAG index names must be 1-128 characters of letters, digits, '.', '_' or '-', "
            "starting with a letter or digit."
        )
    return name.strip()


class IndexBuilder:
    """Configures one index. Each ``use_*`` selection may be made once; a second one is a conflict."""

    def __init__(self, name: str, providers: ProviderRegistry, loaders: LoaderRegistry | None = None) -> None:
        self._name = name
        self._providers = providers
        self._loaders = loaders
        self._sources: list[DocumentSource] = []
        self._embedding: ProviderReference | None = None
        self._store: ProviderReference | None = None
        self._reranker: ProviderReference | None = None
        self._reranker_approved = False
        self._metric = DistanceMetric.COSINE
        self._chunking: ChunkingOptions | None = None
        self._ingestion: IngestionStrategy | None = None
        self._default_mode: RagRetrievalMode | None = None
        self._batching: tuple[int, int, float] | None = None

    # -- sources -----------------------------------------------------------------------------

    def use_directory(
        self,
        path: str | Path,
        pattern: str = DEFAULT_PATTERN,
        recursive: bool = False,
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_documents: int | None = None,
    ) -> Self:
        """Read files under ``path``. The directory need not exist yet.

        By default (``pattern="*"``) every file a registered loader reads (the built-ins and the
        plugins' formats), by extension; other files are counted as skipped. Another pattern reads the
        files it matches, with their loader or as plain text. Files stream into ingestion, so there is
        no document cap unless ``max_documents`` sets one (files past it are reported as
        ``too_many_documents`` failures); a file over ``max_file_bytes`` fails ``too_large``.
        """
        return self.add_source(
            DirectorySource(
                root=Path(path),
                pattern=pattern,
                recursive=recursive,
                max_file_bytes=max_file_bytes,
                max_documents=max_documents,
                loaders=self._loaders,
            )
        )

    def use_documents(self, documents: Iterable[RagDocument]) -> Self:
        """Ingest documents the application already holds."""
        return self.add_source(InMemorySource(documents))

    def add_source(self, source: DocumentSource) -> Self:
        if not isinstance(source, DocumentSource):
            raise RagConfigurationError(f"RAG index '{self._name}': a source must implement DocumentSource.")
        if any(existing.identity == source.identity for existing in self._sources):
            raise RagConfigurationError(f"RAG index '{self._name}' already has this document source.")
        self._sources.append(source)
        return self

    # -- providers ---------------------------------------------------------------------------

    def use_embedding(self, selection: ProviderSelection | str, /, **options: Any) -> Self:
        if self._embedding is not None:
            raise RagConfigurationError(f"RAG index '{self._name}' already has an embedding provider.")
        self._embedding = self._reference(ProviderKind.EMBEDDING, selection, options)
        return self

    def use_vector_store(
        self, selection: ProviderSelection | str, /, *, metric: DistanceMetric | str | None = None, **options: Any
    ) -> Self:
        if self._store is not None:
            raise RagConfigurationError(f"RAG index '{self._name}' already has a vector store.")
        chosen = _metric(metric, self._name) if metric is not None else self._metric
        self._store = self._reference(ProviderKind.VECTOR_STORE, selection, options)
        self._metric = chosen
        return self

    def use_in_memory_vector_store(
        self, metric: DistanceMetric | str = DistanceMetric.COSINE, *, stopwords: str = "english", stemmer: str = "none"
    ) -> Self:
        """The built-in in-memory store; ``stopwords``/``stemmer`` configure its lexical ranking."""
        return self.use_vector_store("in-memory", metric=metric, stopwords=stopwords, stemmer=stemmer)

    def use_reranker(self, selection: ProviderSelection | str, /, *, approved: bool = False, **options: Any) -> Self:
        """Select a reranker for the context policy path. A remote one (content leaves the host) needs
        ``approved=True``: the host's explicit decision that this provider may receive the data."""
        from runiq.rag._reranking.errors import RerankerNotApprovedError

        if self._reranker is not None:
            raise RagConfigurationError(f"RAG index '{self._name}' already has a reranker.")
        reference = self._reference(ProviderKind.RERANKER, selection, options)
        if self._providers.get(ProviderKind.RERANKER, reference.name).remote and not approved:
            raise RerankerNotApprovedError(reference.name)
        self._reranker = reference
        self._reranker_approved = bool(approved)
        return self

    def _reference(
        self, kind: ProviderKind, selection: ProviderSelection | str, options: Mapping[str, Any]
    ) -> ProviderReference:
        if isinstance(selection, str):
            name, display, merged = selection, selection, dict(options)
        elif isinstance(selection, ProviderSelection):
            if options:
                raise RagConfigurationError(
                    f"RAG index '{self._name}': pass options inside the typed {kind.value} selection, not beside it."
                )
            name, display, merged = selection.provider_name, selection.display_name, dict(selection.provider_options())
        else:
            raise RagConfigurationError(f"RAG index '{self._name}': a {kind.value} must be a selection or a name.")
        spec = self._providers.get(kind, name)
        validated = spec.validate_options(merged, context=f"RAG index '{self._name}'")
        return ProviderReference(kind=kind, name=name, options=validated, display_name=display)

    # -- behaviour ---------------------------------------------------------------------------

    def configure_chunking(self, max_characters: int = 1000, overlap: int = 100) -> Self:
        if self._chunking is not None:
            raise RagConfigurationError(f"RAG index '{self._name}' already configured chunking.")
        self._chunking = ChunkingOptions(max_characters=max_characters, overlap=overlap)
        return self

    def configure_embedding_batching(
        self,
        batch_size: int = DEFAULT_EMBEDDING_BATCH_SIZE,
        concurrency: int = DEFAULT_EMBEDDING_CONCURRENCY,
        *,
        timeout_seconds: float = DEFAULT_EMBEDDING_TIMEOUT_SECONDS,
    ) -> Self:
        """Texts per provider call, calls in flight, and each call's timeout (``ProviderTimeoutError``;
        60 s by default, at most 3600), for ingestion and query embedding alike."""
        if batch_size <= 0 or concurrency <= 0:
            raise RagConfigurationError("Embedding batch_size and concurrency must be greater than zero.")
        self._batching = (batch_size, concurrency, embedding_timeout(timeout_seconds))
        return self

    def configure_ingestion(self, configure: Callable[[IngestionBuilder], object]) -> Self:
        if self._ingestion is not None:
            raise RagConfigurationError(f"RAG index '{self._name}' already configured ingestion.")
        ingestion = IngestionBuilder()
        configure(ingestion)  # an exception here leaves the index builder unchanged
        self._ingestion = ingestion.build()
        return self

    def use_default_mode(self, mode: RagRetrievalMode | str) -> Self:
        """The mode used when a query omits ``mode`` (``SEMANTIC`` unless changed)."""
        # Translated outside ``except``: the enum's ValueError quotes the value.
        unknown = RagConfigurationError(f"RAG index '{self._name}': unknown retrieval mode.")
        self._default_mode = call_translated(lambda: RagRetrievalMode(mode), replacing(ValueError, unknown))
        return self

    def build(self) -> IndexDefinition:
        if not self._sources:
            raise RagConfigurationError(f"RAG index '{self._name}' must define at least one document source.")
        if self._store is None:
            raise RagConfigurationError(
                f"RAG index '{self._name}' must define a vector store (for example use_in_memory_vector_store())."
            )
        mode = self._default_mode or RagRetrievalMode.SEMANTIC
        if self._embedding is None and mode is not RagRetrievalMode.LEXICAL:
            raise RagConfigurationError(
                f"RAG index '{self._name}' defaults to {mode.value} retrieval but has no embedding provider; "
                "call use_embedding(...) or use_default_mode(RagRetrievalMode.LEXICAL)."
            )
        batch_size, concurrency, timeout = self._batching or (
            DEFAULT_EMBEDDING_BATCH_SIZE,
            DEFAULT_EMBEDDING_CONCURRENCY,
            DEFAULT_EMBEDDING_TIMEOUT_SECONDS,
        )
        return IndexDefinition(
            name=self._name,
            sources=tuple(self._sources),
            embedding=self._embedding,
            vector_store=self._store,
            reranker=self._reranker,
            reranker_approved=self._reranker_approved,
            metric=self._metric,
            chunking=self._chunking or ChunkingOptions(),
            ingestion=self._ingestion or IngestionStrategy(),
            default_mode=mode,
            embedding_batch_size=batch_size,
            embedding_concurrency=concurrency,
            embedding_timeout_seconds=timeout,
        )


def _metric(value: DistanceMetric | str, index_name: str) -> DistanceMetric:
    unknown = RagConfigurationError(f"RAG index '{index_name}': unknown distance metric.")
    return call_translated(lambda: DistanceMetric(value), replacing(ValueError, unknown))


class RagBuilder:
    """Collects index definitions. ``add_runiq_rag`` returns the same builder on repeated calls."""

    def __init__(self, providers: ProviderRegistry, loaders: LoaderRegistry | None = None) -> None:
        self._providers = providers
        self._loaders = loaders
        self._definitions: dict[str, IndexDefinition] = {}
        self._frozen = False
        self.observability = RagObservabilityOptions()
        self.redactor: RagObservabilityRedactor = DefaultObservabilityRedactor()
        self.sinks: list[ObservabilitySink] = []
        self.scope: RetrievalScopeProvider | None = None

    def use_retrieval_scope(self, scope: RetrievalScopeProvider) -> Self:
        """A mandatory, host-resolved filter (tenant, residency) applied to every retrieval before the store."""
        if not isinstance(scope, RetrievalScopeProvider):
            raise RagConfigurationError("A retrieval scope must implement RetrievalScopeProvider.")
        if self.scope is not None:
            raise RagConfigurationError("A retrieval scope is already configured.")
        self.scope = scope
        return self

    def configure_observability(
        self, options: RagObservabilityOptions, *, redactor: RagObservabilityRedactor | None = None
    ) -> Self:
        """Content-free by default; previews and query visibility are explicit opt-ins (see the options)."""
        if not isinstance(options, RagObservabilityOptions):
            raise RagConfigurationError("configure_observability needs RagObservabilityOptions.")
        if redactor is not None and not isinstance(redactor, RagObservabilityRedactor):
            raise RagConfigurationError("The redactor must implement RagObservabilityRedactor.")
        self.observability = options
        if redactor is not None:
            self.redactor = redactor
        return self

    def add_observability_sink(self, sink: ObservabilitySink) -> Self:
        """Receive every retrieval and ingestion event (already projected and content-free)."""
        if not isinstance(sink, ObservabilitySink):
            raise RagConfigurationError("An observability sink must implement ObservabilitySink.")
        self.sinks.append(sink)
        return self

    def add_index(self, name: str, configure: Callable[[IndexBuilder], object]) -> Self:
        if self._frozen:
            raise RagConfigurationError("Indexes cannot be added after the host is built.")
        clean = validate_index_name(name)
        if clean in self._definitions:
            raise RagConfigurationError(f"RAG index '{clean}' is already registered.")
        index = IndexBuilder(clean, self._providers, self._loaders)
        configure(index)
        self._definitions[clean] = index.build()
        return self

    @property
    def definitions(self) -> tuple[IndexDefinition, ...]:
        return tuple(self._definitions.values())

    def freeze(self) -> None:
        self._frozen = True
