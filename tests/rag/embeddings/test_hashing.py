"""HashingEmbedder and its typed selection: deterministic, normalised, lexical-ish vectors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from runiq.rag import HashingEmbedding, RagConfigurationError
from runiq.rag.providers import EmbeddingInputKind, HashingEmbedder


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


async def test_same_text_gives_the_same_vector_across_instances() -> None:
    """Embedding is a pure function of the text and the dimension."""
    first = await HashingEmbedder(64).embed(["Remote work policy POL-HR-014"], EmbeddingInputKind.DOCUMENT)
    second = await HashingEmbedder(64).embed(["Remote work policy POL-HR-014"], EmbeddingInputKind.QUERY)
    np.testing.assert_array_equal(first, second)


def test_vectors_are_identical_in_another_process() -> None:
    """The hash is not Python's salted hash(): another process with another seed gives the same vector."""
    code = (
        "import json; from runiq.rag.providers import HashingEmbedder;"
        "print(json.dumps(HashingEmbedder(32).embed_sync(['CS1503 in filename.cs'])[0].tolist()))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    here = HashingEmbedder(32).embed_sync(["CS1503 in filename.cs"])[0]
    np.testing.assert_array_equal(np.asarray(json.loads(output.stdout), dtype=np.float32), here)


async def test_vectors_are_unit_length_and_empty_text_is_zero() -> None:
    """Non-empty texts are L2-normalised; text without tokens gives the zero vector."""
    vectors = await HashingEmbedder(128).embed(["alpha beta", "gamma", "", "!!!"], EmbeddingInputKind.DOCUMENT)
    assert vectors.shape == (4, 128) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors[:2], axis=1), [1.0, 1.0], rtol=1e-6)
    assert not vectors[2].any() and not vectors[3].any()


async def test_shared_words_mean_higher_similarity() -> None:
    """Lexical-ish: a text sharing words with the query is closer than one that shares none."""
    docs, query = (
        await HashingEmbedder(256).embed(
            ["remote work is allowed three days", "expense receipts are due monthly"], EmbeddingInputKind.DOCUMENT
        ),
        HashingEmbedder(256).embed_sync(["remote work"])[0],
    )
    assert _cos(docs[0], query) > _cos(docs[1], query)


async def test_large_batches_match_small_ones() -> None:
    """The thread-pool path (more than eight texts) gives the same rows as the inline path."""
    texts = [f"document {i} about topic {i % 3}" for i in range(20)]
    embedder = HashingEmbedder(64)
    batched = await embedder.embed(texts, EmbeddingInputKind.DOCUMENT)
    single = np.vstack([await embedder.embed([t], EmbeddingInputKind.DOCUMENT) for t in texts])
    np.testing.assert_array_equal(batched, single)


def test_model_name_records_the_dimension() -> None:
    """The model identity includes the dimension so a changed dimension is detected."""
    assert HashingEmbedder(64).model_name != HashingEmbedder(128).model_name
    assert HashingEmbedder(64).dimensions == 64


@pytest.mark.parametrize("dimensions", [7, 0, -1, 65537])
def test_selection_rejects_out_of_range_dimensions(dimensions: int) -> None:
    """HashingEmbedding accepts 8..65536 dimensions only."""
    with pytest.raises(RagConfigurationError):
        HashingEmbedding(dimensions=dimensions)


def test_selection_carries_provider_name_and_options() -> None:
    """The typed selection names the 'hashing' provider and passes its dimension."""
    selection = HashingEmbedding(dimensions=64)
    assert selection.provider_name == "hashing"
    assert selection.provider_options() == {"dimensions": 64}
    assert "64" in selection.display_name
