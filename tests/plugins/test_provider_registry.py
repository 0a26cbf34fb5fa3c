"""ProviderRegistry: unique names per kind, plugin attribution, install hints, option validation."""

from __future__ import annotations

import types
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest
from pydantic import BaseModel, ConfigDict, SecretStr, field_validator

from runiq.errors import ProviderNotFoundError, RagConfigurationError
from runiq.hosting import HostBuilder
from runiq.plugins import EmptyOptions, ProviderKind, ProviderRegistry
from runiq.rag.testing.chains import assert_content_free

PluginFactory = Callable[..., types.ModuleType]
SECRET = "sk-live-CANARY-0123456789abcdef"


@asynccontextmanager
async def _factory(options: BaseModel) -> AsyncIterator[object]:
    yield object()


class KeyedOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    api_key: SecretStr
    timeout_seconds: float = 10.0


def test_two_plugins_registering_one_name_name_both_plugins(provider_plugin: PluginFactory) -> None:
    """The same provider name from two plugins fails, and the message names both plugins."""
    plugins = [
        provider_plugin("alpha-plugin", vector_store="shared"),
        provider_plugin("beta-plugin", vector_store="shared"),
    ]
    with pytest.raises(RagConfigurationError) as caught:
        HostBuilder(load_entry_points=False, plugins=plugins)
    message = str(caught.value)
    assert "'shared'" in message
    assert "alpha-plugin" in message
    assert "beta-plugin" in message


def test_a_plugin_cannot_take_a_builtin_name(provider_plugin: PluginFactory) -> None:
    """Re-registering ``hashing`` is a conflict naming ``runiq.builtins`` and the plugin."""
    with pytest.raises(RagConfigurationError, match=r"runiq\.builtins") as caught:
        HostBuilder(load_entry_points=False, plugins=[provider_plugin("impostor", embedding="hashing")])
    assert "impostor" in str(caught.value)


def test_same_name_in_different_kinds_is_allowed(provider_plugin: PluginFactory) -> None:
    """Names are unique per kind: an embedding and a vector store may share one."""
    builder = HostBuilder(
        load_entry_points=False, plugins=[provider_plugin("both", embedding="acme", vector_store="acme")]
    )
    assert builder.providers.get(ProviderKind.EMBEDDING, "acme").kind is ProviderKind.EMBEDDING
    assert builder.providers.get(ProviderKind.VECTOR_STORE, "acme").kind is ProviderKind.VECTOR_STORE


def test_registrations_record_the_plugin(provider_plugin: PluginFactory) -> None:
    """Every spec records which plugin registered it; direct registrations are ``<direct>``."""
    builder = HostBuilder(load_entry_points=False, plugins=[provider_plugin("acme-plugin", embedding="acme")])
    assert builder.providers.get(ProviderKind.EMBEDDING, "acme").plugin == "acme-plugin"
    builder.providers.add_embedding("by-hand", _factory)
    assert builder.providers.get(ProviderKind.EMBEDDING, "by-hand").plugin == "<direct>"


@pytest.mark.parametrize(
    ("kind", "name", "distribution"),
    [
        (ProviderKind.VECTOR_STORE, "postgresql", "runiq-postgresql"),
        (ProviderKind.EMBEDDING, "openai", "runiq-openai"),
        (ProviderKind.EMBEDDING, "sentence-transformers", "runiq-sentence-transformers"),
    ],
)
def test_known_missing_providers_name_the_distribution(kind: ProviderKind, name: str, distribution: str) -> None:
    """A known provider that is not installed says which distribution to pip install."""
    with pytest.raises(ProviderNotFoundError) as caught:
        ProviderRegistry().get(kind, name)
    error = caught.value
    assert f"pip install {distribution}" in str(error)
    assert (error.kind, error.provider, error.distribution) == (kind.value, name, distribution)
    assert isinstance(error, RagConfigurationError)
    assert isinstance(error, LookupError)
    assert isinstance(error, ValueError)


def test_unknown_provider_has_a_generic_hint() -> None:
    """A name nobody knows says to install the plugin that provides it, with no made-up distribution."""
    with pytest.raises(ProviderNotFoundError, match="install the plugin that provides it") as caught:
        ProviderRegistry().get(ProviderKind.EMBEDDING, "my-own")
    assert caught.value.distribution is None
    assert "pip install" not in str(caught.value)


def test_lookup_is_per_kind() -> None:
    """An embedding name does not resolve as a vector store."""
    registry = ProviderRegistry()
    registry.add_embedding("x", _factory)
    with pytest.raises(ProviderNotFoundError):
        registry.get(ProviderKind.VECTOR_STORE, "x")


@pytest.mark.parametrize("name", ["", "  ", " padded", "padded ", None])
def test_provider_names_must_be_trimmed_non_empty_strings(name: object) -> None:
    """Blank, padded or non-string provider names are rejected at registration."""
    with pytest.raises(RagConfigurationError):
        ProviderRegistry().add_embedding(name, _factory)  # type: ignore[arg-type]


def test_factory_must_be_callable_and_options_a_pydantic_model() -> None:
    """A non-callable factory or a non-pydantic options type is rejected at registration."""
    registry = ProviderRegistry()
    with pytest.raises(RagConfigurationError, match="callable"):
        registry.add_vector_store("x", "not callable")  # type: ignore[arg-type]
    with pytest.raises(RagConfigurationError, match="pydantic"):
        registry.add_vector_store("x", _factory, options=dict)  # type: ignore[arg-type]
    assert registry.names(ProviderKind.VECTOR_STORE) == []


def test_option_errors_name_fields_never_values() -> None:
    """Invalid provider options name the offending fields but never echo a (possibly secret) value."""
    registry = ProviderRegistry()
    registry.add_embedding("keyed", _factory, options=KeyedOptions)
    spec = registry.get(ProviderKind.EMBEDDING, "keyed")
    with pytest.raises(RagConfigurationError) as caught:
        spec.validate_options({"api_key": SECRET, "timeout_seconds": SECRET, "tenant": SECRET}, context="a test")
    text = f"{caught.value}\n{caught.value!r}"
    assert "timeout_seconds" in text
    assert "tenant" in text
    assert SECRET not in text
    # Raised outside ``except``: pydantic's ValidationError keeps every value as input.
    assert caught.value.__cause__ is None and caught.value.__context__ is None
    assert_content_free(caught.value, SECRET)


class DsnOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    dsn: str

    @field_validator("dsn")
    @classmethod
    def _no_password(cls, value: str) -> str:
        if ":" in value.partition("@")[0].partition("//")[2]:
            raise RagConfigurationError("Put the password in PGPASSWORD, not in the DSN.")
        return value


def test_a_validators_runiq_advice_is_kept_but_not_the_validation_error() -> None:
    """A RagError raised by a validator is content-free by contract: its text is kept; the
    ValidationError around it, which holds the DSN with its password as input, is not reachable."""
    registry = ProviderRegistry()
    registry.add_vector_store("dsn", _factory, options=DsnOptions)
    spec = registry.get(ProviderKind.VECTOR_STORE, "dsn")
    with pytest.raises(RagConfigurationError, match=r"dsn.*PGPASSWORD") as caught:
        spec.validate_options({"dsn": f"postgresql://app:{SECRET}@db/rag"}, context="a test")
    assert caught.value.__context__ is None
    assert_content_free(caught.value, SECRET)


def test_valid_options_are_validated_into_the_model() -> None:
    """Valid options come back as the provider's frozen model, secrets as SecretStr."""
    registry = ProviderRegistry()
    registry.add_embedding("keyed", _factory, options=KeyedOptions)
    options = registry.get(ProviderKind.EMBEDDING, "keyed").validate_options({"api_key": SECRET}, context="a test")
    assert isinstance(options, KeyedOptions)
    assert options.api_key.get_secret_value() == SECRET
    assert SECRET not in repr(options)


def test_empty_options_forbid_every_key() -> None:
    """Providers registered without an options model accept no options and reject any key."""
    registry = ProviderRegistry()
    registry.add_vector_store("plain", _factory)
    spec = registry.get(ProviderKind.VECTOR_STORE, "plain")
    assert spec.options_model is EmptyOptions
    assert spec.validate_options({}, context="a test") == EmptyOptions()
    with pytest.raises(RagConfigurationError, match="colour"):
        spec.validate_options({"colour": "red"}, context="a test")
