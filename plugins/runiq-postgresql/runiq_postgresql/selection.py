"""The typed selection ``PostgresVectorStorage(...)`` and the ``use_postgresql_vector_store`` convenience."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from runiq_postgresql.settings import DEFAULT_DATA_DIR, DEFAULT_SCHEMA

if TYPE_CHECKING:
    from runiq.rag import IndexBuilder
    from runiq.rag.providers import DistanceMetric

__all__ = ["PROVIDER_NAME", "PostgresVectorStorage", "use_postgresql_vector_store"]

PROVIDER_NAME = "postgresql"


@dataclass(frozen=True, slots=True)
class PostgresVectorStorage:
    """Select the PostgreSQL store: ``index.use_vector_store(PostgresVectorStorage(dsn=...))``.

    Named like the other typed selections (``OpenAiEmbedding``, ``HttpReranking``): the selection says
    what the index uses, and :class:`~runiq_postgresql.PostgresVectorStore` is the store that does it.

    ``dsn=None`` starts (or reuses) the embedded server under ``data_dir``. Other store options
    (pool sizes, HNSW parameters) go in ``options``; they are validated when the index is registered.
    The DSN is kept out of ``repr()`` and of ``display_name``.
    """

    dsn: str | SecretStr | None = field(default=None, repr=False)
    data_dir: str | Path = DEFAULT_DATA_DIR
    schema: str = DEFAULT_SCHEMA
    options: dict[str, Any] = field(default_factory=dict, hash=False)

    @property
    def provider_name(self) -> str:
        return PROVIDER_NAME

    @property
    def display_name(self) -> str:
        where = "embedded" if self.dsn is None else "external"
        return f"PostgreSQL/pgvector ({where}, schema {self.schema})"

    def provider_options(self) -> dict[str, object]:
        values: dict[str, object] = {"data_dir": Path(self.data_dir), "schema": self.schema, **self.options}
        if self.dsn is not None:
            values["dsn"] = self.dsn
        return values


def use_postgresql_vector_store(
    index: IndexBuilder,
    *,
    dsn: str | SecretStr | None = None,
    data_dir: str | Path = DEFAULT_DATA_DIR,
    schema: str = DEFAULT_SCHEMA,
    metric: DistanceMetric | str | None = None,
    **options: Any,
) -> IndexBuilder:
    """``use_postgresql_vector_store(index, dsn=...)`` is ``index.use_vector_store(PostgresVectorStorage(...))``."""
    selection = PostgresVectorStorage(dsn=dsn, data_dir=data_dir, schema=schema, options=dict(options))
    return index.use_vector_store(selection, metric=metric)
