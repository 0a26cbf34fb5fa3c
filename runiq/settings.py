"""Process settings (pydantic-settings): ``RUNIQ_`` environment variables, ``__`` nesting, ``runiq.toml``.

Precedence, highest first: explicit arguments, environment variables, the TOML file, defaults.
Every model is frozen and forbids unknown keys, so a typo fails at start-up instead of being ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from runiq.errors import RagConfigurationError

__all__ = [
    "ChunkingSettings",
    "DirectorySourceSettings",
    "IndexSettings",
    "IngestionSettings",
    "LoggingSettings",
    "ProviderSettings",
    "RagSettings",
    "RuniqSettings",
    "SharedRunSettings",
    "configured_paths_relative_to",
    "resolve_configured_path",
]

_CONFIG_FILE: ContextVar[Path | None] = ContextVar("runiq_config_file", default=None)
_CONFIG_DIR: ContextVar[Path | None] = ContextVar("runiq_config_dir", default=None)


@contextmanager
def configured_paths_relative_to(directory: Path) -> Iterator[None]:
    """While the indexes a configuration declares are registered, its relative paths resolve against
    ``directory`` (the ``runiq.toml``'s directory, else the working directory): source paths, and any
    path option a provider resolves with :func:`resolve_configured_path`."""
    token = _CONFIG_DIR.set(directory)
    try:
        yield
    finally:
        _CONFIG_DIR.reset(token)


def resolve_configured_path(path: Path) -> Path:
    """``path`` (``~`` expanded) anchored to the configuration being registered; unchanged when it is
    absolute or when no configuration is being registered (code registrations keep the working directory)."""
    path = Path(path).expanduser()
    base = _CONFIG_DIR.get()
    return path if base is None or path.is_absolute() else base / path


class _Frozen(BaseModel):
    # Settings can hold credentials: validation errors name the field but never repeat its input.
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)


class ProviderSettings(_Frozen):
    """A provider by registered name, with options validated by the provider's own model."""

    provider: str
    options: dict[str, Any] = Field(default_factory=dict, repr=False)  # may hold credentials


class DirectorySourceSettings(_Frozen):
    """``pattern = "*"`` reads every file a registered loader reads; ``max_file_bytes`` unset is the
    loaders' default (``runiq.rag._loaders.DEFAULT_MAX_FILE_BYTES``)."""

    path: str
    pattern: str = "*"
    recursive: bool = False
    max_file_bytes: int | None = None
    max_documents: int | None = None


class ChunkingSettings(_Frozen):
    max_characters: int = 1000
    overlap: int = 100


class SharedRunSettings(_Frozen):
    """``[rag.indexes.<name>.ingestion.shared]``: runs shared by every process (see ``SharedRunOptions``)."""

    buckets: int = 16
    lease_seconds: float = 30.0
    deployment: str | None = None


class IngestionSettings(_Frozen):
    strategy: Literal["manual", "on_startup", "background_on_startup", "scheduled"] = "manual"
    schedule: str | None = None
    time_zone: str | None = None
    coordinate: bool = False
    shared: SharedRunSettings | None = None


class IndexSettings(_Frozen):
    sources: list[DirectorySourceSettings] = Field(default_factory=list)
    embedding: ProviderSettings | None = None
    vector_store: ProviderSettings = ProviderSettings(provider="in-memory")
    reranker: ProviderSettings | None = None
    reranker_approved: bool = False
    metric: Literal["cosine", "euclidean", "dot_product"] = "cosine"
    chunking: ChunkingSettings = ChunkingSettings()
    ingestion: IngestionSettings = IngestionSettings()
    default_mode: Literal["semantic", "lexical", "hybrid"] = "semantic"


class RagSettings(_Frozen):
    indexes: dict[str, IndexSettings] = Field(default_factory=dict)


class LoggingSettings(_Frozen):
    format: Literal["console", "json"] = "console"
    level: Literal["debug", "info", "warning", "error"] = "info"


class RuniqSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RUNIQ_", env_nested_delimiter="__", frozen=True, extra="forbid", hide_input_in_errors=True
    )

    disabled_plugins: tuple[str, ...] = ()
    logging: LoggingSettings = LoggingSettings()
    rag: RagSettings = RagSettings()
    plugins: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        repr=False,
        description="Free-form plugin sections ([plugins.<name>]) that a plugin may read and validate itself.",
    )
    config_dir: Path | None = Field(default=None, description="Directory relative source paths resolve against.")

    @classmethod
    def load(cls, config_file: str | Path | None = None, **overrides: Any) -> RuniqSettings:
        """Read the environment and, when given, a TOML file (its directory anchors relative paths)."""
        path = Path(config_file).resolve() if config_file is not None else None
        if path is not None and not path.is_file():
            raise RagConfigurationError("The runiq configuration file does not exist.")
        token = _CONFIG_FILE.set(path)
        try:
            if path is not None:
                overrides.setdefault("config_dir", path.parent)
            return cls(**overrides)
        finally:
            _CONFIG_FILE.reset(token)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        path = _CONFIG_FILE.get()
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=path))
        return tuple(sources)
