"""Options validate at registration; the typed selection never shows its DSN."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from runiq.hosting import HostBuilder
from runiq.rag import add_runiq_rag
from runiq.rag.providers import ProviderKind, ProviderRegistry, ProviderSelection
from runiq.settings import RuniqSettings
from runiq_postgresql import PostgresStoreOptions, PostgresVectorStorage, plugin


def test_defaults_mean_the_embedded_server() -> None:
    """No DSN: embedded server under .runiq/postgres, schema 'runiq'."""
    options = PostgresStoreOptions()
    assert options.embedded
    assert options.data_dir == Path(".runiq/postgres")
    assert options.schema_name == "runiq"


@pytest.mark.parametrize(
    "values",
    [{"unknown": 1}, {"pool_min_size": 5, "pool_max_size": 2}, {"dsn": "  "}, {"hnsw_m": 1}, {"pool_max_size": 0}],
)
def test_invalid_options_are_refused(values: dict[str, object]) -> None:
    """Unknown keys, inconsistent pools, blank DSNs and out-of-range HNSW settings fail validation."""
    with pytest.raises(ValidationError):
        PostgresStoreOptions.model_validate(values)


def test_dsn_is_secret() -> None:
    """The DSN is a SecretStr in options and hidden from the selection's repr and display name."""
    dsn = "postgresql://u:hunter2@db/x"
    assert "hunter2" not in repr(PostgresStoreOptions(dsn=dsn))
    selection = PostgresVectorStorage(dsn=dsn, schema="s1")
    assert isinstance(selection, ProviderSelection)
    assert "hunter2" not in repr(selection)
    assert "hunter2" not in selection.display_name
    assert selection.provider_name == "postgresql"
    validated = PostgresStoreOptions.model_validate(selection.provider_options())
    assert validated.dsn is not None
    assert validated.dsn.get_secret_value() == dsn
    assert validated.schema_name == "s1"


def test_plugin_registers_the_postgresql_store() -> None:
    """The hook registers one vector store named 'postgresql' with its options model, doing no I/O."""
    registry = ProviderRegistry()
    plugin.runiq_register_providers(registry)
    spec = registry.get(ProviderKind.VECTOR_STORE, "postgresql")
    assert spec.options_model is PostgresStoreOptions


def _store_options(config: Path) -> PostgresStoreOptions:
    builder = HostBuilder(settings=RuniqSettings.load(config), plugins=[plugin], load_entry_points=False)
    (definition,) = add_runiq_rag(builder).definitions
    assert isinstance(definition.vector_store.options, PostgresStoreOptions)
    return definition.vector_store.options


@pytest.mark.parametrize(
    ("declared", "expected"),
    [('data_dir = "pgdata"', "pgdata"), ('data_dir = "../shared/pg"', "../shared/pg"), ("", ".runiq/postgres")],
    ids=["relative", "parent", "default"],
)
def test_a_data_dir_from_runiq_toml_lives_next_to_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, declared: str, expected: str
) -> None:
    """Like source paths, a relative (or default) data_dir in runiq.toml resolves against the file's
    directory, not the working directory, so every command on that file finds the same server."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "runiq.toml").write_text(
        f'[rag.indexes.docs]\ndefault_mode = "lexical"\nsources = [{{ path = "docs" }}]\n'
        f'vector_store = {{ provider = "postgresql", options = {{ {declared} }} }}\n',
        encoding="utf-8",
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert _store_options(project / "runiq.toml").data_dir == project.resolve() / expected


def test_an_absolute_data_dir_and_code_registrations_keep_their_path(tmp_path: Path) -> None:
    """Absolute stays absolute; in code (no configuration being registered) a relative path stays relative."""
    config = tmp_path / "runiq.toml"
    config.write_text(
        f'[rag.indexes.docs]\ndefault_mode = "lexical"\nsources = [{{ path = "docs" }}]\n'
        f'vector_store = {{ provider = "postgresql", options = {{ data_dir = "{tmp_path / "abs"}" }} }}\n',
        encoding="utf-8",
    )
    assert _store_options(config).data_dir == tmp_path / "abs"
    assert PostgresStoreOptions(data_dir=Path("pgdata")).data_dir == Path("pgdata")
    assert PostgresStoreOptions.model_validate(PostgresVectorStorage(data_dir="rel").provider_options()).data_dir == (
        Path("rel")
    )
