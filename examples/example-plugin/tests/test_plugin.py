"""The example plugin: its registration, options, typed selection and determinism."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

import numpy as np
import pytest
from pydantic import ValidationError
from runiq.hosting import HostBuilder
from runiq.rag import ProviderNotFoundError, RagConfigurationError, add_runiq_rag
from runiq.rag.providers import EmbeddingInputKind, ProviderKind, ProviderSelection
from runiq.settings import RuniqSettings

from runiq_example_plugin import PROVIDER_NAME, CharNgramEmbedder, CharNgramEmbedding, CharNgramOptions
from runiq_example_plugin import plugin as example_plugin

SECRET = "sk-live-CANARY-do-not-echo"


def _builder() -> HostBuilder:
    return HostBuilder(load_entry_points=False, plugins=[example_plugin])


def test_plugin_module_registers_the_provider_with_its_options_model() -> None:
    """Registering the plugin module adds ``example-char-ngrams`` with CharNgramOptions."""
    spec = _builder().providers.get(ProviderKind.EMBEDDING, PROVIDER_NAME)
    assert spec.options_model is CharNgramOptions


def test_entry_point_is_discovered() -> None:
    """Installed, the plugin is found through the ``runiq`` entry-point group under the name ``example``."""
    others = tuple(sorted({ep.name for ep in entry_points(group="runiq")} - {"example"}))
    builder = HostBuilder(settings=RuniqSettings(disabled_plugins=others), load_entry_points=True)
    assert builder.providers.get(ProviderKind.EMBEDDING, PROVIDER_NAME).plugin == "example"


def test_provider_is_unknown_without_the_plugin() -> None:
    """Without the plugin the name is unknown and registration says so."""
    builder = HostBuilder(load_entry_points=False)
    with pytest.raises(ProviderNotFoundError):
        add_runiq_rag(
            builder, lambda rag: rag.add_index("docs", lambda i: i.use_directory("docs").use_embedding(PROVIDER_NAME))
        )


def test_typed_selection_and_name_select_the_same_provider_and_options() -> None:
    """CharNgramEmbedding(...) and use_embedding("example-char-ngrams", ...) give the same provider and options."""
    rag = add_runiq_rag(_builder())
    rag.add_index(
        "typed",
        lambda i: (
            i.use_directory("docs").use_embedding(CharNgramEmbedding(dimensions=64, n=4)).use_in_memory_vector_store()
        ),
    )
    rag.add_index(
        "named",
        lambda i: i.use_directory("docs").use_embedding(PROVIDER_NAME, dimensions=64, n=4).use_in_memory_vector_store(),
    )
    typed, named = (d.embedding for d in rag.definitions)
    assert typed is not None
    assert named is not None
    assert (
        (typed.name, typed.options)
        == (named.name, named.options)
        == (PROVIDER_NAME, CharNgramOptions(dimensions=64, n=4))
    )
    assert typed.display_name == "Character 4-grams (64 dimensions)"
    assert isinstance(CharNgramEmbedding(), ProviderSelection)


def test_invalid_options_fail_at_registration_naming_the_field_not_the_value() -> None:
    """Out-of-range or unknown options fail at add_index; the message names fields, never values."""
    rag = add_runiq_rag(_builder())
    with pytest.raises(RagConfigurationError) as caught:
        rag.add_index(
            "docs", lambda i: i.use_directory("docs").use_embedding(PROVIDER_NAME, dimensions=4, api_key=SECRET)
        )
    assert "dimensions" in str(caught.value)
    assert "api_key" in str(caught.value)
    assert SECRET not in f"{caught.value}{caught.value!r}"
    assert rag.definitions == ()


def test_typed_selection_validates_where_it_is_written() -> None:
    """CharNgramEmbedding rejects bad options on construction."""
    with pytest.raises(ValidationError):
        CharNgramEmbedding(n=0)


async def test_vectors_are_deterministic_across_instances() -> None:
    """Two embedders with the same options produce identical vectors (BLAKE2b, not Python's hash())."""
    texts = ["Remote work policy", "POL-HR-014"]
    first = await CharNgramEmbedder().embed(texts, EmbeddingInputKind.DOCUMENT)
    second = await CharNgramEmbedder().embed(texts, EmbeddingInputKind.QUERY)
    np.testing.assert_array_equal(first, second)


async def test_rows_are_unit_length_except_for_texts_without_ngrams() -> None:
    """Rows are L2-normalised; a text too short for one n-gram is the zero vector."""
    vectors = await CharNgramEmbedder(CharNgramOptions(n=3)).embed(["remote", ""], EmbeddingInputKind.DOCUMENT)
    assert np.linalg.norm(vectors[0]) == pytest.approx(1.0, abs=1e-6)
    assert not vectors[1].any()


async def test_lowercase_option_controls_case_folding() -> None:
    """With lowercase=True, case does not matter; with lowercase=False it does."""
    folded = CharNgramEmbedder(CharNgramOptions(lowercase=True))
    cased = CharNgramEmbedder(CharNgramOptions(lowercase=False))
    a, b = await folded.embed(["Remote Work", "remote work"], EmbeddingInputKind.DOCUMENT)
    np.testing.assert_array_equal(a, b)
    c, d = await cased.embed(["Remote Work", "remote work"], EmbeddingInputKind.DOCUMENT)
    assert not np.array_equal(c, d)
    assert folded.model_name != cased.model_name


async def test_large_batches_match_small_ones() -> None:
    """The thread-pool path for large batches returns the same rows as the inline path."""
    client = CharNgramEmbedder(CharNgramOptions(dimensions=32))
    texts = [f"document number {i}" for i in range(20)]
    batch = await client.embed(texts, EmbeddingInputKind.DOCUMENT)
    singles = np.vstack([await client.embed([t], EmbeddingInputKind.DOCUMENT) for t in texts])
    np.testing.assert_array_equal(batch, singles)


def test_registering_the_plugin_imports_no_numpy() -> None:
    """Registration runs in every host and ``runiq`` command: numpy loads when the provider opens."""
    probe = (
        "import sys\n"
        "from runiq.hosting import HostBuilder\n"
        "from runiq_example_plugin import plugin\n"
        "HostBuilder(load_entry_points=False, plugins=[plugin])\n"
        "print('numpy' in sys.modules)\n"
    )
    completed = subprocess.run(  # our own interpreter importing our own modules
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert completed.stdout.strip() == "False"


async def test_the_registered_factory_opens_the_embedder() -> None:
    """The factory a host enters on first use imports the embedder and yields it with the options."""
    spec = _builder().providers.get(ProviderKind.EMBEDDING, PROVIDER_NAME)
    async with spec.factory(CharNgramOptions(dimensions=16)) as client:
        assert isinstance(client, CharNgramEmbedder)
        vectors = await client.embed(["remote work"], EmbeddingInputKind.DOCUMENT)
    assert vectors.shape == (1, 16)
