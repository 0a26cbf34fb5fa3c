"""Every registration error: one exception tree, builtin bases, fixed messages with no paths or secrets."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, SecretStr

from runiq.hosting import HostBuilder
from runiq.rag import (
    HashingEmbedding,
    IndexBuilder,
    IngestionStrategyKind,
    ProviderNotFoundError,
    RagBuilder,
    RagConfigurationError,
    RagError,
    add_runiq_rag,
)
from runiq.rag._ingestion.strategies import IngestionStrategy
from runiq.rag.testing.chains import assert_content_free

SECRET = "sk-live-CANARY-5f0e9d8c7b6a"
# A directory whose name must never surface in an error message.
PRIVATE = "CANARY-private-directory"

Scenario = Callable[[RagBuilder, Path], object]


class SecretOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    api_key: SecretStr
    timeout_seconds: float = 5.0


def _src(index: IndexBuilder, root: Path) -> IndexBuilder:
    return index.use_directory(root / PRIVATE, "*.md", recursive=True)


def _ok(index: IndexBuilder, root: Path) -> IndexBuilder:
    return _src(index, root).use_in_memory_vector_store().use_embedding(HashingEmbedding(dimensions=32))


def _duplicate_name(rag: RagBuilder, root: Path) -> object:
    rag.add_index("docs", lambda i: _ok(i, root))
    return rag.add_index(" docs ", lambda i: _ok(i, root))


SCENARIOS: dict[str, Scenario] = {
    "empty-name": lambda rag, root: rag.add_index("", lambda i: _ok(i, root)),
    "blank-name": lambda rag, root: rag.add_index("   ", lambda i: _ok(i, root)),
    "invalid-name": lambda rag, root: rag.add_index(f"{root}/{PRIVATE}", lambda i: _ok(i, root)),
    "secret-name": lambda rag, root: rag.add_index(SECRET + " x", lambda i: _ok(i, root)),
    "duplicate-name": _duplicate_name,
    "invalid-cron": lambda rag, root: rag.add_index(
        "docs", lambda i: _ok(i, root).configure_ingestion(lambda g: g.scheduled("*/0 * * * *"))
    ),
    "secret-cron": lambda rag, root: rag.add_index(
        "docs", lambda i: _ok(i, root).configure_ingestion(lambda g: g.scheduled(SECRET))
    ),
    "invalid-time-zone": lambda rag, root: rag.add_index(
        "docs", lambda i: _ok(i, root).configure_ingestion(lambda g: g.scheduled("0 2 * * *", f"{root}/{PRIVATE}"))
    ),
    "schedule-on-manual": lambda rag, root: rag.add_index(
        "docs",
        lambda i: _ok(i, root).configure_ingestion(
            lambda g: IngestionStrategy(kind=IngestionStrategyKind.MANUAL, schedule="0 2 * * *")
        ),
    ),
    "invalid-strategy-kind": lambda rag, root: rag.add_index(
        "docs",
        lambda i: _ok(i, root).configure_ingestion(lambda g: IngestionStrategy(kind=SECRET)),  # type: ignore[arg-type]
    ),
    "two-strategies": lambda rag, root: rag.add_index(
        "docs", lambda i: _ok(i, root).configure_ingestion(lambda g: g.manual().background_on_startup())
    ),
    "unknown-postgresql": lambda rag, root: rag.add_index(
        "docs", lambda i: _src(i, root).use_vector_store("postgresql", dsn=f"postgresql://u:{SECRET}@db/x")
    ),
    "unknown-openai": lambda rag, root: rag.add_index(
        "docs", lambda i: _src(i, root).use_embedding("openai", api_key=SECRET)
    ),
    "unknown-sentence-transformers": lambda rag, root: rag.add_index(
        "docs", lambda i: _src(i, root).use_embedding("sentence-transformers", model_path=str(root / PRIVATE))
    ),
    "unknown-custom": lambda rag, root: rag.add_index("docs", lambda i: _src(i, root).use_embedding("my-provider")),
    "invalid-options-secret-value": lambda rag, root: rag.add_index(
        "docs", lambda i: _src(i, root).use_embedding("keyed", api_key=SECRET, timeout_seconds=SECRET)
    ),
    "unknown-option-secret-value": lambda rag, root: rag.add_index(
        "docs", lambda i: _src(i, root).use_embedding("hashing", api_key=SECRET)
    ),
    "semantic-without-embedding": lambda rag, root: rag.add_index(
        "docs", lambda i: _src(i, root).use_in_memory_vector_store()
    ),
    "hybrid-without-embedding": lambda rag, root: rag.add_index(
        "docs", lambda i: _src(i, root).use_in_memory_vector_store().use_default_mode("hybrid")
    ),
    "duplicate-source": lambda rag, root: rag.add_index("docs", lambda i: _src(_ok(i, root), root)),
    "invalid-pattern": lambda rag, root: rag.add_index(
        "docs", lambda i: i.use_directory(root / PRIVATE, f"../{PRIVATE}/*.md")
    ),
    "second-store": lambda rag, root: rag.add_index("docs", lambda i: _ok(i, root).use_in_memory_vector_store()),
    "second-embedding": lambda rag, root: rag.add_index("docs", lambda i: _ok(i, root).use_embedding("hashing")),
    "typed-plus-options": lambda rag, root: rag.add_index(
        "docs", lambda i: _src(i, root).use_embedding(HashingEmbedding(), api_key=SECRET)
    ),
    "missing-source": lambda rag, root: rag.add_index(
        "docs", lambda i: i.use_in_memory_vector_store().use_embedding("hashing")
    ),
    "missing-store": lambda rag, root: rag.add_index("docs", lambda i: _src(i, root).use_embedding("hashing")),
    "invalid-chunking": lambda rag, root: rag.add_index("docs", lambda i: _ok(i, root).configure_chunking(100, 100)),
    "invalid-metric": lambda rag, root: rag.add_index(
        "docs", lambda i: _src(i, root).use_in_memory_vector_store(metric=SECRET)
    ),
    "invalid-mode": lambda rag, root: rag.add_index("docs", lambda i: _ok(i, root).use_default_mode(SECRET)),
}

NOT_FOUND = {"unknown-postgresql", "unknown-openai", "unknown-sentence-transformers", "unknown-custom"}


@pytest.fixture
def keyed_rag() -> RagBuilder:
    """A RagBuilder whose registry also has an embedding provider 'keyed' with a secret option."""
    builder = HostBuilder(load_entry_points=False)
    builder.providers.add_embedding("keyed", lambda options: None, options=SecretOptions)  # type: ignore[arg-type,return-value]
    return add_runiq_rag(builder)


def _raise(scenario: str, rag: RagBuilder, root: Path) -> RagConfigurationError:
    with pytest.raises(RagConfigurationError) as caught:
        SCENARIOS[scenario](rag, root)
    return caught.value


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_registration_error_is_a_configuration_value_error(
    keyed_rag: RagBuilder, tmp_path: Path, scenario: str
) -> None:
    """Each registration failure is a RagConfigurationError, hence a RagError and a ValueError."""
    error = _raise(scenario, keyed_rag, tmp_path)
    assert isinstance(error, RagError)
    assert isinstance(error, ValueError)
    assert isinstance(error, ProviderNotFoundError) is (scenario in NOT_FOUND)
    if scenario in NOT_FOUND:
        assert isinstance(error, LookupError)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_registration_errors_contain_no_paths_or_secrets(keyed_rag: RagBuilder, tmp_path: Path, scenario: str) -> None:
    """str(), repr() and the formatted traceback of every registration error omit paths and secret values,
    and no foreign exception (a ValidationError holding the values, a ZoneInfo or enum error quoting
    them) is reachable from it, not even as a suppressed ``__context__``."""
    error = _raise(scenario, keyed_rag, tmp_path)
    rendered = "\n".join([str(error), repr(error), *traceback.format_exception(error)])
    assert SECRET not in rendered
    assert PRIVATE not in rendered
    assert str(tmp_path) not in "\n".join([str(error), repr(error)])
    assert_content_free(error, SECRET, PRIVATE)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_a_failed_registration_stores_nothing(keyed_rag: RagBuilder, tmp_path: Path, scenario: str) -> None:
    """After any registration error the builder holds only what was registered before it."""
    _raise(scenario, keyed_rag, tmp_path)
    assert [d.name for d in keyed_rag.definitions] == (["docs"] if scenario == "duplicate-name" else [])


def test_provider_option_errors_name_the_fields(keyed_rag: RagBuilder, tmp_path: Path) -> None:
    """The invalid-options message names each offending field (but, as tested above, no value)."""
    error = _raise("invalid-options-secret-value", keyed_rag, tmp_path)
    assert "timeout_seconds" in str(error)
    assert "'keyed'" in str(error)
    assert "'docs'" in str(error)
    error = _raise("unknown-option-secret-value", keyed_rag, tmp_path)
    assert "api_key" in str(error)
