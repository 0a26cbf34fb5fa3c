"""IndexBuilder: one selection of each kind, sources, providers, defaults and frozen definitions."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from runiq.rag import (
    HashingEmbedding,
    IndexBuilder,
    IndexDefinition,
    IngestionStrategyKind,
    ProviderNotFoundError,
    RagBuilder,
    RagConfigurationError,
    RagDocument,
    RagRetrievalMode,
)
from runiq.rag._builtins import HashingOptions
from runiq.rag._chunking import ChunkingOptions
from runiq.rag._ingestion.strategies import IngestionStrategy
from runiq.rag._sources import DirectorySource, InMemorySource
from runiq.rag._stores import InMemoryVectorStoreSelection
from runiq.rag.providers import DistanceMetric, ProviderKind

Configure = Callable[[IndexBuilder], object]


def _index(rag: RagBuilder, configure: Configure, name: str = "docs") -> IndexDefinition:
    rag.add_index(name, configure)
    return next(d for d in rag.definitions if d.name == name)


def _base(index: IndexBuilder) -> IndexBuilder:
    return index.use_directory("docs", "*.md").use_in_memory_vector_store()


# -- defaults and happy paths -----------------------------------------------------------------


def test_minimal_index_gets_documented_defaults(rag: RagBuilder) -> None:
    """Defaults: Manual ingestion, semantic mode, cosine, 1000/100 chunking, no reranker."""
    definition = _index(rag, lambda i: _base(i).use_embedding(HashingEmbedding()))
    assert definition.ingestion == IngestionStrategy(kind=IngestionStrategyKind.MANUAL)
    assert definition.default_mode is RagRetrievalMode.SEMANTIC
    assert definition.metric is DistanceMetric.COSINE
    assert definition.chunking == ChunkingOptions(max_characters=1000, overlap=100)
    assert definition.reranker is None


def test_typed_selection_records_provider_options_and_display(rag: RagBuilder) -> None:
    """HashingEmbedding(dimensions=64) becomes provider 'hashing' with validated options and its display name."""
    definition = _index(rag, lambda i: _base(i).use_embedding(HashingEmbedding(dimensions=64)))
    assert definition.embedding is not None
    assert definition.embedding.kind is ProviderKind.EMBEDDING
    assert definition.embedding.name == "hashing"
    assert definition.embedding.options == HashingOptions(dimensions=64)
    assert definition.embedding.display_name == "Hashing embedder (64 dimensions)"


def test_string_selection_validates_options_through_the_provider_model(rag: RagBuilder) -> None:
    """use_embedding("hashing", dimensions="64") stores the provider model's validated value (64)."""
    definition = _index(rag, lambda i: _base(i).use_embedding("hashing", dimensions="64"))
    assert definition.embedding is not None
    assert definition.embedding.options == HashingOptions(dimensions=64)
    assert definition.embedding.display_name == "hashing"


def test_in_memory_store_selection_forms_are_equivalent(rag: RagBuilder) -> None:
    """use_in_memory_vector_store(), its typed selection and the name 'in-memory' select the same store."""
    a = _index(rag, lambda i: i.use_directory("d").use_in_memory_vector_store().use_default_mode("lexical"), "a")
    b = _index(rag, lambda i: i.use_directory("d").use_vector_store("in-memory").use_default_mode("lexical"), "b")
    c = _index(
        rag,
        lambda i: i.use_directory("d").use_vector_store(InMemoryVectorStoreSelection()).use_default_mode("lexical"),
        "c",
    )
    assert a.vector_store.name == b.vector_store.name == c.vector_store.name == "in-memory"
    assert a.vector_store.options == b.vector_store.options == c.vector_store.options
    assert a.vector_store.kind is ProviderKind.VECTOR_STORE


@pytest.mark.parametrize("metric", [DistanceMetric.EUCLIDEAN, "dot_product", "cosine"])
def test_metric_is_recorded(rag: RagBuilder, metric: DistanceMetric | str) -> None:
    """The store's distance metric is stored as a DistanceMetric."""
    definition = _index(rag, lambda i: i.use_directory("d").use_in_memory_vector_store(metric).use_embedding("hashing"))
    assert definition.metric is DistanceMetric(metric)


@pytest.mark.parametrize(
    ("configure", "kind"),
    [
        (lambda g: g.manual(), IngestionStrategyKind.MANUAL),
        (lambda g: g.on_startup(), IngestionStrategyKind.ON_STARTUP),
        (lambda g: g.background_on_startup(), IngestionStrategyKind.BACKGROUND_ON_STARTUP),
    ],
)
def test_explicit_strategies_are_kept_without_a_schedule(
    rag: RagBuilder, configure: Configure, kind: IngestionStrategyKind
) -> None:
    """Manual, OnStartup and BackgroundOnStartup are stored as chosen, with no schedule or time zone."""
    definition = _index(rag, lambda i: _base(i).use_embedding("hashing").configure_ingestion(configure))
    assert definition.ingestion == IngestionStrategy(kind=kind)
    assert definition.ingestion.schedule is None
    assert definition.ingestion.time_zone is None


def test_scheduled_strategy_is_normalised(rag: RagBuilder) -> None:
    """A scheduled strategy keeps the whitespace-normalised cron and its time zone."""
    definition = _index(
        rag,
        lambda i: _base(i).use_embedding("hashing").configure_ingestion(lambda g: g.scheduled(" 0  2 * * * ", "UTC")),
    )
    assert definition.ingestion == IngestionStrategy(
        kind=IngestionStrategyKind.SCHEDULED, schedule="0 2 * * *", time_zone="UTC"
    )


def test_lexical_default_without_embedding_is_accepted(rag: RagBuilder) -> None:
    """An index that defaults to lexical retrieval needs no embedding provider."""
    definition = _index(rag, lambda i: _base(i).use_default_mode(RagRetrievalMode.LEXICAL))
    assert definition.embedding is None
    assert definition.default_mode is RagRetrievalMode.LEXICAL


@pytest.mark.parametrize("mode", [None, RagRetrievalMode.SEMANTIC, RagRetrievalMode.HYBRID, "hybrid"])
def test_semantic_or_hybrid_default_without_embedding_is_rejected(rag: RagBuilder, mode: Any) -> None:
    """Semantic (the default) or hybrid retrieval without an embedding provider fails at registration."""

    def configure(index: IndexBuilder) -> None:
        _base(index)
        if mode is not None:
            index.use_default_mode(mode)

    with pytest.raises(RagConfigurationError, match="no embedding provider"):
        rag.add_index("docs", configure)
    assert rag.definitions == ()


def test_use_directory_normalises_the_path_without_touching_it(
    rag: RagBuilder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative directory is made absolute and normalised lexically; it need not exist."""
    monkeypatch.chdir(tmp_path)
    definition = _index(
        rag,
        lambda i: (
            i.use_directory("a/../docs", "*.md", recursive=True)
            .use_in_memory_vector_store()
            .use_default_mode("lexical")
        ),
    )
    (source,) = definition.sources
    assert source == DirectorySource(root=tmp_path / "docs", pattern="*.md", recursive=True)
    assert not (tmp_path / "docs").exists()


def test_directory_recursion_defaults_to_false(rag: RagBuilder) -> None:
    """use_directory(path, pattern) is not recursive unless asked, and the pattern defaults to '*'."""
    definition = _index(rag, lambda i: i.use_directory("docs").use_in_memory_vector_store().use_default_mode("lexical"))
    (source,) = definition.sources
    assert isinstance(source, DirectorySource)
    assert (source.pattern, source.recursive) == ("*", False)


def test_several_sources_and_custom_sources_are_kept_in_order(rag: RagBuilder) -> None:
    """Distinct directory sources and an in-memory source are all kept, in registration order."""
    documents = [RagDocument(document_id="faq", content="Frequently asked questions.")]
    definition = _index(
        rag,
        lambda i: (
            i.use_directory("docs", "*.md")
            .use_directory("docs", "*.txt")
            .use_documents(documents)
            .use_in_memory_vector_store()
            .use_default_mode("lexical")
        ),
    )
    assert [s.source_kind for s in definition.sources] == ["directory", "directory", "in-memory"]
    assert isinstance(definition.sources[2], InMemorySource)


def test_multiple_indexes_are_distinct_and_ordered(rag: RagBuilder) -> None:
    """Each add_index produces its own definition; definitions keep registration order."""
    rag.add_index("b", lambda i: _base(i).use_embedding(HashingEmbedding(dimensions=16)))
    rag.add_index("a", lambda i: _base(i).use_default_mode("lexical"))
    b, a = rag.definitions
    assert (b.name, a.name) == ("b", "a")
    assert b.embedding is not None
    assert a.embedding is None


def test_definitions_are_frozen(rag: RagBuilder) -> None:
    """IndexDefinition and its parts cannot be mutated; a change is a copy (dataclasses.replace)."""
    definition = _index(rag, lambda i: _base(i).use_embedding("hashing"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        definition.name = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        definition.ingestion.kind = IngestionStrategyKind.ON_STARTUP  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        definition.chunking.max_characters = 1  # type: ignore[misc]
    assert isinstance(definition.sources, tuple)
    assert definition.embedding is not None
    with pytest.raises(Exception, match="frozen"):
        definition.embedding.options.dimensions = 8  # type: ignore[attr-defined]
    copy = dataclasses.replace(definition, name="copy")
    assert copy.name == "copy"
    assert definition.name == "docs"


def test_builder_methods_return_the_same_builder(rag: RagBuilder) -> None:
    """Every fluent method returns the builder it was called on."""
    seen: list[bool] = []

    def configure(index: IndexBuilder) -> None:
        seen.append(index.use_directory("d") is index)
        seen.append(index.use_embedding("hashing") is index)
        seen.append(index.use_in_memory_vector_store() is index)
        seen.append(index.configure_chunking(500, 50) is index)
        seen.append(index.configure_ingestion(lambda g: g.manual()) is index)
        seen.append(index.use_default_mode("hybrid") is index)

    assert rag.add_index("docs", configure) is rag
    assert seen == [True] * 6


# -- conflicts and invalid selections -------------------------------------------------------


@pytest.mark.parametrize(
    ("configure", "message"),
    [
        (lambda i: _base(i).use_in_memory_vector_store(), "already has a vector store"),
        (lambda i: _base(i).use_vector_store(InMemoryVectorStoreSelection()), "already has a vector store"),
        (lambda i: _base(i).use_embedding("hashing").use_embedding(HashingEmbedding()), "already has an embedding"),
        (lambda i: _base(i).use_embedding(HashingEmbedding()).use_embedding("hashing"), "already has an embedding"),
        (lambda i: _base(i).configure_chunking().configure_chunking(), "already configured chunking"),
        (
            lambda i: _base(i).configure_ingestion(lambda g: g.manual()).configure_ingestion(lambda g: g.manual()),
            "already configured ingestion",
        ),
        (lambda i: _base(i).configure_ingestion(lambda g: g.manual().on_startup()), "already selected"),
        (lambda i: _base(i).configure_ingestion(lambda g: g.on_startup().scheduled("* * * * *")), "already selected"),
    ],
)
def test_second_selection_is_a_conflict(rag: RagBuilder, configure: Configure, message: str) -> None:
    """Selecting a store, embedding, chunking or ingestion strategy twice fails at registration."""
    with pytest.raises(RagConfigurationError, match=message):
        rag.add_index("docs", configure)
    assert rag.definitions == ()


@pytest.mark.parametrize(
    "configure",
    [
        lambda i: i.use_embedding(HashingEmbedding(), dimensions=64),
        lambda i: i.use_vector_store(InMemoryVectorStoreSelection(), capacity=10),
    ],
)
def test_typed_selection_plus_extra_options_is_rejected(rag: RagBuilder, configure: Configure) -> None:
    """Options belong inside a typed selection; passing more beside it is rejected."""
    with pytest.raises(RagConfigurationError, match="inside the typed"):
        rag.add_index("docs", lambda i: configure(i.use_directory("d")))


@pytest.mark.parametrize("selection", [42, None, object(), HashingOptions()])
def test_selection_must_be_a_name_or_a_typed_selection(rag: RagBuilder, selection: object) -> None:
    """Anything that is neither a provider name nor a ProviderSelection is rejected."""
    with pytest.raises(RagConfigurationError, match="selection or a name"):
        rag.add_index("docs", lambda i: i.use_directory("d").use_embedding(selection))  # type: ignore[arg-type]


def test_duplicate_source_is_rejected(rag: RagBuilder, tmp_path: Path) -> None:
    """The same directory (after normalisation), pattern and recursion twice is a duplicate source."""
    with pytest.raises(RagConfigurationError, match="already has this document source"):
        rag.add_index(
            "docs", lambda i: i.use_directory(tmp_path, "*.md").use_directory(tmp_path / "." / "x" / "..", "*.md")
        )


def test_non_source_objects_are_rejected(rag: RagBuilder) -> None:
    """add_source only accepts DocumentSource implementations."""
    with pytest.raises(RagConfigurationError, match="must implement DocumentSource"):
        rag.add_index("docs", lambda i: i.add_source("docs/"))  # type: ignore[arg-type]


@pytest.mark.parametrize("pattern", ["", "  ", "../*.md", "sub/*.md", "sub\\*.md", "*\x00.md"])
def test_directory_pattern_must_be_a_bare_file_name_pattern(rag: RagBuilder, pattern: str) -> None:
    """Patterns with separators, '..' or NUL (or empty ones) are rejected at registration."""
    with pytest.raises(RagConfigurationError, match="bare file-name pattern"):
        rag.add_index("docs", lambda i: i.use_directory("docs", pattern))


def test_missing_source_is_rejected(rag: RagBuilder) -> None:
    """An index without a document source fails at registration."""
    with pytest.raises(RagConfigurationError, match="at least one document source"):
        rag.add_index("docs", lambda i: i.use_in_memory_vector_store().use_embedding("hashing"))


def test_missing_store_is_rejected(rag: RagBuilder) -> None:
    """An index without a vector store fails at registration."""
    with pytest.raises(RagConfigurationError, match="must define a vector store"):
        rag.add_index("docs", lambda i: i.use_directory("docs").use_embedding("hashing"))


@pytest.mark.parametrize(("max_characters", "overlap"), [(0, 0), (-1, 0), (100, -1), (100, 100), (100, 101)])
def test_invalid_chunking_is_rejected(rag: RagBuilder, max_characters: int, overlap: int) -> None:
    """max <= 0, overlap < 0 and overlap >= max are rejected."""
    with pytest.raises(RagConfigurationError, match="Chunking"):
        rag.add_index("docs", lambda i: _base(i).configure_chunking(max_characters, overlap))


@pytest.mark.parametrize(("batch_size", "concurrency"), [(0, 1), (1, 0), (-5, 2)])
def test_invalid_embedding_batching_is_rejected(rag: RagBuilder, batch_size: int, concurrency: int) -> None:
    """Embedding batch size and concurrency must be positive."""
    with pytest.raises(RagConfigurationError, match="greater than zero"):
        rag.add_index("docs", lambda i: _base(i).configure_embedding_batching(batch_size, concurrency))


@pytest.mark.parametrize("timeout", [0, -1.0, float("nan"), float("inf"), 3600.5, True, None, "5"])
def test_invalid_embedding_timeout_is_rejected(rag: RagBuilder, timeout: Any) -> None:
    """The per-call timeout is finite seconds in (0, 3600]; None (no timeout) is no longer accepted."""
    with pytest.raises(RagConfigurationError, match="timeout_seconds"):
        rag.add_index("docs", lambda i: _base(i).configure_embedding_batching(timeout_seconds=timeout))


def test_embedding_calls_get_a_timeout_by_default(rag: RagBuilder) -> None:
    """Without configure_embedding_batching every provider call is bounded by 60 s; a configured value is kept."""
    default = _index(rag, lambda i: _base(i).use_embedding(HashingEmbedding()))
    assert (default.embedding_batch_size, default.embedding_concurrency) == (64, 2)
    assert default.embedding_timeout_seconds == 60.0
    fast = _index(
        rag, lambda i: _base(i).use_embedding("hashing").configure_embedding_batching(8, timeout_seconds=2), "fast"
    )
    assert (fast.embedding_batch_size, fast.embedding_concurrency, fast.embedding_timeout_seconds) == (8, 2, 2.0)


def test_unknown_metric_and_mode_are_rejected(rag: RagBuilder) -> None:
    """An unknown distance metric or retrieval mode is a configuration error."""
    with pytest.raises(RagConfigurationError, match="unknown distance metric"):
        rag.add_index("a", lambda i: i.use_directory("d").use_in_memory_vector_store(metric="manhattan"))
    with pytest.raises(RagConfigurationError, match="unknown retrieval mode"):
        rag.add_index("b", lambda i: _base(i).use_default_mode("fuzzy"))


@pytest.mark.parametrize(
    ("configure", "distribution"),
    [
        (lambda i: i.use_vector_store("postgresql"), "runiq-postgresql"),
        (lambda i: i.use_embedding("openai"), "runiq-openai"),
        (lambda i: i.use_embedding("sentence-transformers"), "runiq-sentence-transformers"),
    ],
)
def test_unknown_known_provider_names_the_distribution_to_install(
    rag: RagBuilder, configure: Configure, distribution: str
) -> None:
    """Selecting postgresql/openai/sentence-transformers without the plugin says which distribution to install."""
    with pytest.raises(ProviderNotFoundError, match=f"pip install {distribution}$"):
        rag.add_index("docs", lambda i: configure(i.use_directory("d")))


def test_typed_selection_of_an_uninstalled_provider_is_not_found(rag: RagBuilder) -> None:
    """A typed selection is resolved through the registry too: an uninstalled provider fails at registration."""

    class PostgresLike:
        provider_name = "postgresql"
        display_name = "PostgreSQL"

        def provider_options(self) -> dict[str, object]:
            return {"dsn": None}

    with pytest.raises(ProviderNotFoundError, match="pip install runiq-postgresql"):
        rag.add_index("docs", lambda i: i.use_directory("d").use_vector_store(PostgresLike()))


def test_provider_names_are_resolved_per_kind(rag: RagBuilder) -> None:
    """'hashing' is an embedding, so using it as a vector store is not found."""
    with pytest.raises(ProviderNotFoundError, match="vector store provider 'hashing'"):
        rag.add_index("docs", lambda i: i.use_directory("d").use_vector_store("hashing"))


# -- no partial state -------------------------------------------------------------------------


def _raise_after_selecting(ingestion: Any) -> None:
    ingestion.on_startup()
    raise KeyError("callback failed")


def _store_and_embedding(index: IndexBuilder) -> object:
    return index.use_in_memory_vector_store().use_embedding("hashing")


def _store(index: IndexBuilder) -> object:
    return index.use_in_memory_vector_store()


def _embedding(index: IndexBuilder) -> object:
    return index.use_embedding("hashing")


@pytest.mark.parametrize(
    ("rejected", "accepted", "rest"),
    [
        (
            lambda i: i.configure_ingestion(_raise_after_selecting),
            lambda i: i.configure_ingestion(lambda g: g.manual()),
            _store_and_embedding,
        ),
        (
            lambda i: i.configure_ingestion(lambda g: g.scheduled("61 * * * *")),
            lambda i: i.configure_ingestion(lambda g: g.on_startup()),
            _store_and_embedding,
        ),
        (
            lambda i: i.use_embedding("hashing", dimensions=2),
            lambda i: i.use_embedding("hashing", dimensions=16),
            _store,
        ),
        (lambda i: i.use_embedding("openai"), lambda i: i.use_embedding(HashingEmbedding()), _store),
        (
            lambda i: i.use_embedding(HashingEmbedding(), dimensions=5),
            lambda i: i.use_embedding(HashingEmbedding()),
            _store,
        ),
        (lambda i: i.use_in_memory_vector_store(metric="manhattan"), _store, _embedding),
        (lambda i: i.use_vector_store("postgresql"), _store, _embedding),
        (lambda i: i.configure_chunking(10, 10), lambda i: i.configure_chunking(500, 50), _store_and_embedding),
        (lambda i: i.use_directory("docs", "../*.md"), lambda i: i.use_directory("docs", "*.md"), _store_and_embedding),
        (lambda i: i.use_default_mode("fuzzy"), lambda i: i.use_default_mode("lexical"), _store),
    ],
    ids=[
        "ingestion-callback-raises",
        "ingestion-invalid-cron",
        "embedding-invalid-options",
        "embedding-unknown-provider",
        "embedding-typed-plus-options",
        "store-invalid-metric",
        "store-unknown-provider",
        "chunking-invalid",
        "directory-invalid-pattern",
        "mode-unknown",
    ],
)
def test_a_rejected_call_leaves_the_index_builder_unchanged(
    rag: RagBuilder, rejected: Configure, accepted: Configure, rest: Configure
) -> None:
    """A call that raises records nothing, so the same selection can then be made correctly."""

    def configure(index: IndexBuilder) -> None:
        index.use_directory("source")
        with pytest.raises((RagConfigurationError, KeyError)):
            rejected(index)
        accepted(index)
        rest(index)

    rag.add_index("docs", configure)
    assert [d.name for d in rag.definitions] == ["docs"]


def test_exception_in_configure_ingestion_leaves_no_strategy(rag: RagBuilder) -> None:
    """If the configure_ingestion callback raises after selecting a strategy, none is recorded."""

    def configure(index: IndexBuilder) -> None:
        _base(index).use_embedding("hashing")
        with pytest.raises(KeyError):
            index.configure_ingestion(_raise_after_selecting)

    definition = _index(rag, configure)
    assert definition.ingestion.kind is IngestionStrategyKind.MANUAL


def test_exception_in_the_index_callback_registers_nothing(rag: RagBuilder) -> None:
    """If add_index's configure callback raises, no definition is stored and the name stays free."""

    def broken(index: IndexBuilder) -> None:
        _base(index).use_embedding("hashing")
        raise RuntimeError("application bug")

    with pytest.raises(RuntimeError, match="application bug"):
        rag.add_index("docs", broken)
    assert rag.definitions == ()
    rag.add_index("docs", lambda i: _base(i).use_embedding("hashing"))
    assert [d.name for d in rag.definitions] == ["docs"]
