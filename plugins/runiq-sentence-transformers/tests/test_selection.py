"""The selection and options: validated at once, frozen, no file I/O at registration."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest
from runiq.hosting import HostBuilder
from runiq.rag import RagConfigurationError, add_runiq_rag

import runiq_sentence_transformers.plugin
from runiq_sentence_transformers import SentenceTransformerEmbedding, SentenceTransformerOptions


def test_defaults_select_the_packaged_model_on_cpu() -> None:
    """No arguments: packaged all-MiniLM-L6-v2, CPU, batch 32, normalised."""
    selection = SentenceTransformerEmbedding()
    assert selection.provider_name == "sentence-transformers"
    assert selection.provider_options() == {
        "model_path": None,
        "device": "cpu",
        "batch_size": 32,
        "normalize": True,
        "model_name": None,
    }
    assert selection.display_name == "Sentence Transformers all-MiniLM-L6-v2 (cpu)"


def test_paths_are_accepted_and_never_displayed() -> None:
    """A Path is stored as a string; the display name does not show it."""
    selection = SentenceTransformerEmbedding(model_path=Path("/models/secret-project/bge"), batch_size=64)
    assert selection.provider_options()["model_path"] == "/models/secret-project/bge"
    assert "secret-project" not in selection.display_name


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"batch_size": 0}, "batch_size"), ({"device": "tpu"}, "device"), ({"model_path": "  "}, "model_path")],
)
def test_invalid_selections_fail_naming_the_option(kwargs, field) -> None:
    """Bad values fail where the selection is written, naming the option."""
    with pytest.raises(RagConfigurationError, match=field) as caught:
        SentenceTransformerEmbedding(**kwargs)
    assert caught.value.__context__ is None  # the ValidationError holds the values (a model path)


def test_registration_does_not_look_at_the_path() -> None:
    """A path that does not exist yet is fine at registration (checked when the client opens)."""
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_sentence_transformers.plugin])
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: (
                index.use_documents([])
                .use_embedding(SentenceTransformerEmbedding(model_path="/not/yet/mounted"))
                .use_in_memory_vector_store()
            ),
        ),
    )
    builder.build()


def test_identity_reflects_model_and_normalisation() -> None:
    """The recorded model identity changes with the model and with normalisation."""
    assert SentenceTransformerOptions().identity == "sentence-transformers:all-MiniLM-L6-v2"
    assert SentenceTransformerOptions(normalize=False).identity.endswith("+unnormalized")
    assert SentenceTransformerOptions(model_path="/m/bge-small").identity == "sentence-transformers:bge-small"
    assert SentenceTransformerOptions(model_name="custom").identity == "sentence-transformers:custom"


def test_options_are_frozen() -> None:
    """Registered options cannot change afterwards."""
    options = SentenceTransformerOptions()
    with pytest.raises(ValueError, match="frozen"):
        options.batch_size = 1  # type: ignore[misc]


def test_the_entry_point_is_declared() -> None:
    """Installed hosts find the plugin through the ``runiq`` entry-point group."""
    [ep] = [ep for ep in entry_points(group="runiq") if ep.name == "sentence-transformers"]
    assert ep.value == "runiq_sentence_transformers.plugin"
