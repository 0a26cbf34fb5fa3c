"""Selections, options and registration: validated at once, no environment read, no I/O."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest
from runiq.hosting import HostBuilder
from runiq.rag import RagConfigurationError, RagIngestionManager, add_runiq_rag
from runiq.rag.testing.chains import assert_content_free

import runiq_openai.plugin
from runiq_openai import OpenAiEmbedding, OpenAiEmbeddingModels, OpenAiEmbeddingOptions, use_openai_embedding_model


def test_models_carry_their_native_dimensions() -> None:
    """3-small 1536, 3-large 3072, ada-002 1536; only ada refuses reduced dimensions."""
    dims = {m: m.dimensions for m in OpenAiEmbeddingModels}
    assert dims == {
        OpenAiEmbeddingModels.TEXT_EMBEDDING_3_SMALL: 1536,
        OpenAiEmbeddingModels.TEXT_EMBEDDING_3_LARGE: 3072,
        OpenAiEmbeddingModels.TEXT_EMBEDDING_ADA_002: 1536,
    }
    assert [m for m in OpenAiEmbeddingModels if not m.supports_reduced_dimensions] == [
        OpenAiEmbeddingModels.TEXT_EMBEDDING_ADA_002
    ]


def test_selection_options_and_display_name() -> None:
    """Only the options given are passed; the display name has no URL or key."""
    selection = OpenAiEmbedding(OpenAiEmbeddingModels.TEXT_EMBEDDING_3_LARGE, dimensions=1024, base_url="http://h:1/v1")
    assert selection.provider_name == "openai"
    assert selection.provider_options() == {
        "model": "text-embedding-3-large",
        "dimensions": 1024,
        "base_url": "http://h:1/v1",
    }
    assert selection.display_name == "OpenAI text-embedding-3-large (1024 dimensions)"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"dimensions": 4096}, "dimensions"),
        ({"model": OpenAiEmbeddingModels.TEXT_EMBEDDING_ADA_002, "dimensions": 512}, "dimensions"),
        ({"base_url": "ftp://host/v1"}, "base_url"),
        ({"base_url": "https://user:pw@host/v1"}, "base_url"),
        ({"api_key_env": "NOT A NAME"}, "api_key_env"),
        ({"timeout": 0}, "timeout"),
        ({"max_inputs_per_request": 4096}, "max_inputs_per_request"),
        ({"max_retries": -1}, "max_retries"),
    ],
)
def test_invalid_selections_fail_naming_the_option(kwargs, field) -> None:
    """Bad values fail where the selection is written; the message names the option, not the value."""
    with pytest.raises(RagConfigurationError) as caught:
        OpenAiEmbedding(**kwargs)
    assert field in str(caught.value)
    assert "pw@" not in str(caught.value)
    assert caught.value.__context__ is None  # the ValidationError holds the values (a URL with credentials)
    assert_content_free(caught.value, "pw@")


def test_unknown_models_declare_their_dimensions_or_leave_them_to_the_probe() -> None:
    """An OpenAI-compatible server's model is a plain name; its declared length is not sent unless asked."""
    options = OpenAiEmbeddingOptions(model="nomic-embed-text", dimensions=768)
    assert options.declared_dimensions == 768
    assert options.request_dimensions is None
    assert (
        OpenAiEmbeddingOptions(model="nomic-embed-text", dimensions=768, send_dimensions=True).request_dimensions == 768
    )
    assert OpenAiEmbeddingOptions(model="nomic-embed-text").declared_dimensions is None


def _builder() -> HostBuilder:
    return HostBuilder(load_entry_points=False, plugins=[runiq_openai.plugin])


def test_registration_reads_no_environment(monkeypatch) -> None:
    """An index can be registered and a host built with no key set; only opening the client needs it."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    builder = _builder()
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: use_openai_embedding_model(
                index.use_documents([]).use_in_memory_vector_store(), OpenAiEmbeddingModels.TEXT_EMBEDDING_3_SMALL
            ),
        ),
    )
    builder.build()


async def test_a_missing_key_surfaces_when_the_index_is_first_used(monkeypatch) -> None:
    """Ingestion fails (no crash at build) and the manager reports the failure."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    builder = _builder()
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs", lambda index: index.use_documents([]).use_embedding(OpenAiEmbedding()).use_in_memory_vector_store()
        ),
    )
    async with builder.build() as host:
        operation = await host.services.get(RagIngestionManager).run("docs")
    assert operation.state.value == "failed"


def test_string_references_validate_the_same_options() -> None:
    """``use_embedding("openai", ...)`` goes through the same frozen options model (extra keys refused)."""
    builder = _builder()
    with pytest.raises(RagConfigurationError, match="bogus"):
        add_runiq_rag(
            builder,
            lambda rag: rag.add_index("docs", lambda index: index.use_documents([]).use_embedding("openai", bogus=1)),
        )


def test_options_are_frozen() -> None:
    """Registered options cannot change afterwards."""
    options = OpenAiEmbeddingOptions()
    with pytest.raises(ValueError, match="frozen"):
        options.timeout = 1.0  # type: ignore[misc]


def test_the_entry_point_is_declared() -> None:
    """Installed hosts find the plugin through the ``runiq`` entry-point group."""
    [ep] = [ep for ep in entry_points(group="runiq") if ep.name == "openai"]
    assert ep.value == "runiq_openai.plugin"
