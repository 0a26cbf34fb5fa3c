"""Options validate at registration; the typed selection never shows its DSN."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from runiq.rag import ProviderKind, ProviderRegistry, ProviderSelection
from runiq_postgresql import PostgreSqlVectorStore, PostgresStoreOptions, plugin


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
    selection = PostgreSqlVectorStore(dsn=dsn, schema="s1")
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
