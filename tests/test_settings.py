"""RuniqSettings: RUNIQ_ prefix, __ nesting, runiq.toml through load(path), frozen, unknown keys forbidden."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from runiq.settings import IndexSettings, RuniqSettings

SECRET = "sk-live-CANARY-settings-91ab"


@pytest.fixture(autouse=True)
def _clean_runiq_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """RUNIQ_* variables of the machine running the tests must not leak into these tests."""
    for name in list(os.environ):
        if name.upper().startswith("RUNIQ_"):
            monkeypatch.delenv(name)


def _toml(directory: Path, text: str) -> Path:
    path = directory / "runiq.toml"
    path.write_text(text)
    return path


def test_defaults() -> None:
    """With no environment and no file: no blocked plugins, console/info logging, no indexes, no config dir."""
    settings = RuniqSettings()
    assert settings.disabled_plugins == ()
    assert (settings.logging.format, settings.logging.level) == ("console", "info")
    assert settings.rag.indexes == {}
    assert settings.config_dir is None


def test_environment_variables_use_the_runiq_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only RUNIQ_-prefixed variables are read; the same name without the prefix is ignored."""
    monkeypatch.setenv("LOGGING__LEVEL", "error")
    assert RuniqSettings().logging.level == "info"
    monkeypatch.setenv("RUNIQ_LOGGING__LEVEL", "debug")
    assert RuniqSettings().logging.level == "debug"


def test_double_underscore_nests(monkeypatch: pytest.MonkeyPatch) -> None:
    """'__' separates nesting levels, down to index options."""
    monkeypatch.setenv("RUNIQ_LOGGING__FORMAT", "json")
    monkeypatch.setenv("RUNIQ_RAG__INDEXES__DOCS__EMBEDDING__PROVIDER", "hashing")
    monkeypatch.setenv("RUNIQ_RAG__INDEXES__DOCS__EMBEDDING__OPTIONS__DIMENSIONS", "64")
    monkeypatch.setenv("RUNIQ_RAG__INDEXES__DOCS__INGESTION__STRATEGY", "on_startup")
    settings = RuniqSettings()
    assert settings.logging.format == "json"
    docs = settings.rag.indexes["docs"]
    assert docs.embedding is not None
    assert docs.embedding.provider == "hashing"
    assert docs.embedding.options == {"dimensions": "64"}  # the provider's own model converts it
    assert docs.ingestion.strategy == "on_startup"


def test_disabled_plugins_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """RUNIQ_DISABLED_PLUGINS takes a JSON list."""
    monkeypatch.setenv("RUNIQ_DISABLED_PLUGINS", '["example", "dashboard"]')
    assert RuniqSettings().disabled_plugins == ("example", "dashboard")


def test_toml_is_read_through_load(tmp_path: Path) -> None:
    """RuniqSettings.load(path) reads the TOML file and records its directory as config_dir."""
    path = _toml(tmp_path, '[logging]\nlevel = "warning"\n\n[rag.indexes.docs]\nsources = [{ path = "docs" }]\n')
    settings = RuniqSettings.load(path)
    assert settings.logging.level == "warning"
    assert list(settings.rag.indexes) == ["docs"]
    assert settings.config_dir == tmp_path.resolve()


def test_toml_is_read_only_when_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A runiq.toml in the working directory is not read unless passed to load()."""
    _toml(tmp_path, '[logging]\nlevel = "error"\n')
    monkeypatch.chdir(tmp_path)
    assert RuniqSettings().logging.level == "info"
    assert RuniqSettings.load().logging.level == "info"
    assert RuniqSettings.load("runiq.toml").logging.level == "error"


def test_relative_toml_path_anchors_to_the_absolute_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """load('conf/runiq.toml') records an absolute config_dir, so a later chdir changes nothing."""
    (tmp_path / "conf").mkdir()
    _toml(tmp_path / "conf", "")
    monkeypatch.chdir(tmp_path)
    assert RuniqSettings.load("conf/runiq.toml").config_dir == (tmp_path / "conf").resolve()


def test_precedence_is_arguments_then_environment_then_toml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Explicit arguments beat RUNIQ_ variables, which beat runiq.toml, which beats defaults."""
    path = _toml(tmp_path, '[logging]\nlevel = "warning"\nformat = "json"\n')
    assert RuniqSettings.load(path).logging.level == "warning"
    monkeypatch.setenv("RUNIQ_LOGGING__LEVEL", "error")
    settings = RuniqSettings.load(path)
    assert settings.logging.level == "error"
    assert settings.logging.format == "json"  # untouched by the environment, kept from the file
    assert RuniqSettings.load(path, logging={"level": "debug"}).logging.level == "debug"
    assert RuniqSettings.load(path, config_dir=Path("/explicit")).config_dir == Path("/explicit")


def test_environment_deep_merges_into_toml_indexes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A variable for one index field overrides that field only; the file's other fields and indexes stay."""
    path = _toml(
        tmp_path,
        '[rag.indexes.docs]\nsources = [{ path = "docs" }]\nchunking = { max_characters = 500, overlap = 50 }\n'
        '[rag.indexes.notes]\nsources = [{ path = "notes" }]\n',
    )
    monkeypatch.setenv("RUNIQ_RAG__INDEXES__DOCS__CHUNKING__OVERLAP", "25")
    indexes = RuniqSettings.load(path).rag.indexes
    assert (indexes["docs"].chunking.max_characters, indexes["docs"].chunking.overlap) == (500, 25)
    assert [s.path for s in indexes["docs"].sources] == ["docs"]
    assert set(indexes) == {"docs", "notes"}


def test_settings_are_frozen() -> None:
    """Settings and their nested models cannot be changed after construction."""
    settings = RuniqSettings(rag={"indexes": {"docs": {"sources": [{"path": "d"}]}}})
    with pytest.raises(ValidationError, match="frozen"):
        settings.disabled_plugins = ("x",)  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        settings.logging.level = "debug"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        settings.rag.indexes["docs"].default_mode = "lexical"  # type: ignore[misc]


@pytest.mark.parametrize(
    "toml",
    [
        "colour = 'blue'\n",
        "[logging]\nverbosity = 3\n",
        "[rag]\nindex = {}\n",
        "[rag.indexes.docs]\nsourcs = [{ path = 'docs' }]\n",
        "[rag.indexes.docs]\nsources = [{ path = 'docs', patern = '*.md' }]\n",
        "[rag.indexes.docs.ingestion]\nstrategy = 'manual'\ncron = '* * * * *'\n",
    ],
    ids=["top-level", "logging", "rag", "index", "source", "ingestion"],
)
def test_unknown_toml_keys_fail(tmp_path: Path, toml: str) -> None:
    """A misspelt key anywhere in runiq.toml fails instead of being ignored."""
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        RuniqSettings.load(_toml(tmp_path, toml))


@pytest.mark.parametrize(
    "variable",
    ["RUNIQ_LOGGING__VERBOSITY", "RUNIQ_RAG__INDEXES__DOCS__SOURCS", "RUNIQ_RAG__INDEXES__DOCS__INGESTION__CRON"],
)
def test_unknown_nested_environment_keys_fail(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    """A misspelt nested RUNIQ_ variable fails instead of being ignored."""
    monkeypatch.setenv(variable, "1")
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        RuniqSettings()


def test_unknown_arguments_fail() -> None:
    """Unknown constructor arguments are rejected (extra='forbid')."""
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        RuniqSettings(colour="blue")  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("field", "value"),
    [("strategy", "hourly"), ("metric", "manhattan"), ("default_mode", "fuzzy")],
)
def test_closed_choices_are_validated(field: str, value: str) -> None:
    """Strategy, metric and default mode accept only their documented values."""
    index: dict[str, object] = {"sources": [{"path": "d"}]}
    if field == "strategy":
        index["ingestion"] = {"strategy": value}
    else:
        index[field] = value
    with pytest.raises(ValidationError):
        RuniqSettings(rag={"indexes": {"docs": index}})


def test_invalid_toml_syntax_fails(tmp_path: Path) -> None:
    """A syntactically broken runiq.toml raises (a ValueError), never yields defaults."""
    with pytest.raises(ValueError, match="line 1"):
        RuniqSettings.load(_toml(tmp_path, "[rag\n"))


def test_validation_errors_do_not_echo_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rejected setting is named in the error, but its value (possibly a secret) is not repeated."""
    monkeypatch.setenv("RUNIQ_RAG__INDEXES__DOCS__API_KEY", SECRET)
    with pytest.raises(ValidationError) as from_env:
        RuniqSettings()
    path = _toml(tmp_path, f'[rag.indexes.docs]\nsources = [{{ path = "d" }}]\ndsn = "{SECRET}"\n')
    with pytest.raises(ValidationError) as from_toml:
        RuniqSettings.load(path)
    for caught in (from_env, from_toml):
        assert "docs" in str(caught.value)
        assert SECRET not in str(caught.value)
        assert SECRET not in repr(caught.value)


def test_provider_option_values_stay_out_of_the_settings_repr() -> None:
    """Provider options may hold credentials (validated into SecretStr later), so repr(settings) omits them."""
    settings = RuniqSettings(
        rag={"indexes": {"docs": {"embedding": {"provider": "openai", "options": {"api_key": SECRET}}}}}
    )
    assert SECRET not in repr(settings)
    assert SECRET not in str(settings)
    assert settings.rag.indexes["docs"].embedding is not None
    assert settings.rag.indexes["docs"].embedding.options == {"api_key": SECRET}


def test_index_settings_defaults_match_the_code_defaults() -> None:
    """An index declared with only a source gets the same defaults the builder applies."""
    index = IndexSettings(sources=[{"path": "d"}])  # type: ignore[list-item]
    assert index.vector_store.provider == "in-memory"
    assert index.metric == "cosine"
    assert (index.chunking.max_characters, index.chunking.overlap) == (1000, 100)
    assert index.ingestion.strategy == "manual"
    assert index.default_mode == "semantic"
    assert index.embedding is None
