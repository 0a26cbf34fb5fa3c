"""Config-driven deployments: turn ``RuniqSettings.rag.indexes`` into the same calls the code path makes.

Because settings go through :class:`IndexBuilder` too, both paths produce identical definitions and
share every validation rule.
"""

from __future__ import annotations

import functools
from pathlib import Path

from runiq.rag._errors import RagConfigurationError
from runiq.rag._ingestion.strategies import IngestionBuilder
from runiq.rag._registration.builder import IndexBuilder, RagBuilder
from runiq.settings import IndexSettings, RuniqSettings, configured_paths_relative_to, resolve_configured_path

__all__ = ["add_indexes_from_settings"]


def add_indexes_from_settings(rag: RagBuilder, settings: RuniqSettings) -> RagBuilder:
    base = settings.config_dir or Path.cwd()
    for name, index in settings.rag.indexes.items():
        rag.add_index(name, functools.partial(_configure, index=index, base=base))
    return rag


def _configure(builder: IndexBuilder, index: IndexSettings, base: Path) -> None:
    with configured_paths_relative_to(base):  # provider path options (a store's data directory) too
        _apply(builder, index)


def _apply(builder: IndexBuilder, index: IndexSettings) -> None:
    for source in index.sources:
        limit = {} if source.max_file_bytes is None else {"max_file_bytes": source.max_file_bytes}
        builder.use_directory(
            resolve_configured_path(Path(source.path)),
            source.pattern,
            recursive=source.recursive,
            max_documents=source.max_documents,
            **limit,
        )
    if index.embedding is not None:
        builder.use_embedding(index.embedding.provider, **index.embedding.options)
    builder.use_vector_store(index.vector_store.provider, metric=index.metric, **index.vector_store.options)
    if index.reranker is not None:
        builder.use_reranker(index.reranker.provider, approved=index.reranker_approved, **index.reranker.options)
    builder.configure_chunking(index.chunking.max_characters, index.chunking.overlap)
    builder.configure_ingestion(lambda ingestion: _strategy(ingestion, index))
    builder.use_default_mode(index.default_mode)


def _strategy(ingestion: IngestionBuilder, index: IndexSettings) -> None:
    options = index.ingestion
    if options.strategy != "scheduled" and (
        options.schedule is not None or options.time_zone is not None or options.coordinate
    ):
        raise RagConfigurationError("Only a scheduled ingestion strategy takes a schedule or time zone.")
    if options.strategy == "scheduled":
        ingestion.scheduled(options.schedule or "", options.time_zone, coordinate=options.coordinate)
    elif options.strategy == "on_startup":
        ingestion.on_startup()
    elif options.strategy == "background_on_startup":
        ingestion.background_on_startup()
    else:
        ingestion.manual()
    if options.shared is not None:
        ingestion.shared_runs(
            buckets=options.shared.buckets,
            lease_seconds=options.shared.lease_seconds,
            deployment=options.shared.deployment,
        )
