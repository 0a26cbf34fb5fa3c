"""Config-driven indexes: runiq.toml and RUNIQ_ variables produce the same frozen definitions as code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runiq.hosting import HostBuilder
from runiq.rag import (
    IndexBuilder,
    IndexDefinition,
    ProviderNotFoundError,
    RagConfigurationError,
    add_runiq_rag,
)
from runiq.settings import RuniqSettings

SECRET = "sk-live-CANARY-settings-7c1d"

TOML = """
[rag.indexes.docs]
sources = [{ path = "docs", pattern = "*.md", recursive = true }]
embedding = { provider = "hashing", options = { dimensions = 64 } }
metric = "euclidean"
chunking = { max_characters = 500, overlap = 50 }
default_mode = "hybrid"

[rag.indexes.docs.ingestion]
strategy = "scheduled"
schedule = " 0  2 * * * "
time_zone = "Europe/Berlin"

[rag.indexes.notes]
sources = [{ path = "/srv/notes" }, { path = "../shared", pattern = "*.txt" }]
default_mode = "lexical"
ingestion = { strategy = "on_startup" }
"""


def _code_docs(root: Path) -> object:
    def configure(index: IndexBuilder) -> None:
        index.use_directory(root / "docs", "*.md", recursive=True)
        index.use_embedding("hashing", dimensions=64)
        index.use_in_memory_vector_store(metric="euclidean")
        index.configure_chunking(500, 50)
        index.configure_ingestion(lambda ingestion: ingestion.scheduled("0 2 * * *", "Europe/Berlin"))
        index.use_default_mode("hybrid")

    return configure


def _code_notes(root: Path) -> object:
    def configure(index: IndexBuilder) -> None:
        index.use_directory("/srv/notes")
        index.use_directory(root.parent / "shared", "*.txt")
        index.use_in_memory_vector_store()
        index.configure_ingestion(lambda ingestion: ingestion.on_startup())
        index.use_default_mode("lexical")

    return configure


def _from_code(root: Path) -> tuple[IndexDefinition, ...]:
    """Call before setting RUNIQ_ variables: the code path must not pick up configured indexes."""
    builder = HostBuilder(settings=RuniqSettings(), load_entry_points=False)
    rag = add_runiq_rag(builder)
    rag.add_index("docs", _code_docs(root))  # type: ignore[arg-type]
    rag.add_index("notes", _code_notes(root))  # type: ignore[arg-type]
    return rag.definitions


def _from_settings(settings: RuniqSettings) -> tuple[IndexDefinition, ...]:
    return add_runiq_rag(HostBuilder(settings=settings, load_entry_points=False)).definitions


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "conf"
    directory.mkdir()
    (directory / "runiq.toml").write_text(TOML)
    return directory


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from a directory that is not the configuration's, so relative paths cannot resolve by accident."""
    directory = tmp_path / "elsewhere"
    directory.mkdir()
    monkeypatch.chdir(directory)
    return directory


def _docs_env(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    prefix = "RUNIQ_RAG__INDEXES__DOCS__"
    sources = [{"path": str(root / "docs"), "pattern": "*.md", "recursive": True}]
    monkeypatch.setenv(prefix + "SOURCES", json.dumps(sources))
    monkeypatch.setenv(prefix + "EMBEDDING__PROVIDER", "hashing")
    monkeypatch.setenv(prefix + "EMBEDDING__OPTIONS__DIMENSIONS", "64")
    monkeypatch.setenv(prefix + "METRIC", "euclidean")
    monkeypatch.setenv(prefix + "CHUNKING__MAX_CHARACTERS", "500")
    monkeypatch.setenv(prefix + "CHUNKING__OVERLAP", "50")
    monkeypatch.setenv(prefix + "DEFAULT_MODE", "hybrid")
    monkeypatch.setenv(prefix + "INGESTION__STRATEGY", "scheduled")
    monkeypatch.setenv(prefix + "INGESTION__SCHEDULE", "0 2 * * *")
    monkeypatch.setenv(prefix + "INGESTION__TIME_ZONE", "Europe/Berlin")


def test_toml_definitions_equal_the_code_definitions(config_dir: Path, elsewhere: Path) -> None:
    """Indexes declared in runiq.toml produce IndexDefinitions == those registered in code."""
    from_toml = _from_settings(RuniqSettings.load(config_dir / "runiq.toml"))
    assert from_toml == _from_code(config_dir)
    assert [d.name for d in from_toml] == ["docs", "notes"]


def test_environment_definitions_equal_the_code_definitions(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """RUNIQ_RAG__INDEXES__DOCS__... variables produce the same definition as the code path."""
    from_code = _from_code(tmp_path)[0]
    _docs_env(monkeypatch, tmp_path)
    (from_env,) = _from_settings(RuniqSettings())
    assert from_env == from_code


def test_host_builder_reads_the_environment_by_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """HostBuilder() without settings reads RUNIQ_ variables, so add_runiq_rag registers their indexes."""
    expected = _from_code(tmp_path)[:1]
    _docs_env(monkeypatch, tmp_path)
    rag = add_runiq_rag(HostBuilder(load_entry_points=False))
    assert rag.definitions == expected


def test_relative_source_paths_resolve_against_the_toml_directory(config_dir: Path, elsewhere: Path) -> None:
    """A relative source path in runiq.toml is relative to the file's directory, not the working directory."""
    docs, notes = _from_settings(RuniqSettings.load(config_dir / "runiq.toml"))
    assert docs.sources[0].root == config_dir / "docs"  # type: ignore[attr-defined]
    assert notes.sources[1].root == config_dir.parent / "shared"  # type: ignore[attr-defined]
    assert notes.sources[0].root == Path("/srv/notes")  # type: ignore[attr-defined]


def test_relative_source_paths_from_the_environment_resolve_against_the_working_directory(
    monkeypatch: pytest.MonkeyPatch, elsewhere: Path
) -> None:
    """Without a TOML file there is no configuration directory: relative paths use the working directory."""
    monkeypatch.setenv("RUNIQ_RAG__INDEXES__DOCS__SOURCES", '[{"path": "docs"}]')
    monkeypatch.setenv("RUNIQ_RAG__INDEXES__DOCS__DEFAULT_MODE", "lexical")
    (definition,) = _from_settings(RuniqSettings())
    assert definition.sources[0].root == elsewhere / "docs"  # type: ignore[attr-defined]


def test_environment_overrides_toml_field_by_field(
    config_dir: Path, elsewhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An environment variable overrides the TOML value it names; the TOML's other values stay."""
    monkeypatch.setenv("RUNIQ_RAG__INDEXES__DOCS__CHUNKING__MAX_CHARACTERS", "700")
    monkeypatch.setenv("RUNIQ_RAG__INDEXES__DOCS__INGESTION__TIME_ZONE", "UTC")
    docs, _ = _from_settings(RuniqSettings.load(config_dir / "runiq.toml"))
    assert (docs.chunking.max_characters, docs.chunking.overlap) == (700, 50)
    assert (docs.ingestion.schedule, docs.ingestion.time_zone) == ("0 2 * * *", "UTC")
    assert docs.metric.value == "euclidean"


def test_configured_indexes_are_registered_once(config_dir: Path) -> None:
    """Repeated add_runiq_rag calls register the configured indexes once, then accumulate code indexes."""
    builder = HostBuilder(settings=RuniqSettings.load(config_dir / "runiq.toml"), load_entry_points=False)
    first = add_runiq_rag(builder)
    second = add_runiq_rag(builder, lambda rag: rag.add_index("extra", _code_notes(config_dir)))  # type: ignore[arg-type]
    assert first is second
    assert [d.name for d in second.definitions] == ["docs", "notes", "extra"]


def test_code_index_with_a_configured_name_is_a_duplicate(config_dir: Path) -> None:
    """A code registration cannot silently replace an index declared in configuration."""
    builder = HostBuilder(settings=RuniqSettings.load(config_dir / "runiq.toml"), load_entry_points=False)
    with pytest.raises(RagConfigurationError, match="'docs' is already registered"):
        add_runiq_rag(builder, lambda rag: rag.add_index("docs", _code_docs(config_dir)))  # type: ignore[arg-type]


def _settings(index: dict[str, object]) -> RuniqSettings:
    return RuniqSettings(rag={"indexes": {"docs": {"sources": [{"path": "/docs"}], **index}}})


@pytest.mark.parametrize(
    ("provider", "distribution"),
    [("openai", "runiq-openai"), ("sentence-transformers", "runiq-sentence-transformers")],
)
def test_configured_unknown_provider_names_the_distribution(provider: str, distribution: str) -> None:
    """A provider named in configuration but not installed fails at registration with the pip hint."""
    with pytest.raises(ProviderNotFoundError, match=f"pip install {distribution}"):
        _from_settings(_settings({"embedding": {"provider": provider, "options": {"api_key": SECRET}}}))


def test_configured_unknown_store_names_the_distribution() -> None:
    """vector_store.provider = "postgresql" without the plugin says pip install runiq-postgresql."""
    settings = _settings({"embedding": {"provider": "hashing"}, "vector_store": {"provider": "postgresql"}})
    with pytest.raises(ProviderNotFoundError, match="pip install runiq-postgresql"):
        _from_settings(settings)


def test_configured_invalid_options_name_the_field_not_the_value() -> None:
    """Invalid provider options from configuration name the field and never the (secret) value."""
    with pytest.raises(RagConfigurationError) as caught:
        _from_settings(_settings({"embedding": {"provider": "hashing", "options": {"dimensions": SECRET}}}))
    assert "dimensions" in str(caught.value)
    assert SECRET not in f"{caught.value}{caught.value!r}"


@pytest.mark.parametrize(
    "index",
    [
        {"embedding": {"provider": "hashing"}, "ingestion": {"strategy": "scheduled", "schedule": "*/0 * * * *"}},
        {"embedding": {"provider": "hashing"}, "ingestion": {"strategy": "scheduled"}},
        {"embedding": {"provider": "hashing"}, "ingestion": {"strategy": "on_startup", "time_zone": "UTC"}},
        {"embedding": {"provider": "hashing"}, "chunking": {"max_characters": 100, "overlap": 100}},
        {"default_mode": "semantic"},
        {"sources": [], "embedding": {"provider": "hashing"}},
    ],
    ids=[
        "invalid-cron",
        "scheduled-without-schedule",
        "zone-without-schedule",
        "chunking",
        "no-embedding",
        "no-source",
    ],
)
def test_configured_indexes_share_the_code_validation(index: dict[str, object]) -> None:
    """Configuration goes through the same IndexBuilder rules, raising RagConfigurationError."""
    with pytest.raises(RagConfigurationError):
        _from_settings(_settings(index))


@pytest.mark.parametrize("name", ["has space", "a/b", "-x"])
def test_configured_index_names_are_validated(name: str) -> None:
    """Index names from configuration are validated like code names."""
    settings = RuniqSettings(rag={"indexes": {name: {"sources": [{"path": "/d"}], "default_mode": "lexical"}}})
    with pytest.raises(RagConfigurationError, match="RAG index names must be"):
        _from_settings(settings)
