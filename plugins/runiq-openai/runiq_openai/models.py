"""OpenAI embedding model identities. They live here, not in the provider-neutral core."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["OpenAiEmbeddingModels"]


class OpenAiEmbeddingModels(StrEnum):
    """The OpenAI embedding models runiq knows, with their native dimensions.

    Any other model name (an OpenAI-compatible server's) may still be used as a string, with
    ``dimensions`` given explicitly.
    """

    TEXT_EMBEDDING_3_SMALL = "text-embedding-3-small"
    TEXT_EMBEDDING_3_LARGE = "text-embedding-3-large"
    TEXT_EMBEDDING_ADA_002 = "text-embedding-ada-002"

    @property
    def dimensions(self) -> int:
        """The length of the vectors the model returns when no ``dimensions`` is requested."""
        return _NATIVE_DIMENSIONS[self]

    @property
    def supports_reduced_dimensions(self) -> bool:
        """Whether the API accepts a ``dimensions`` parameter (text-embedding-3 and later)."""
        return self is not OpenAiEmbeddingModels.TEXT_EMBEDDING_ADA_002


_NATIVE_DIMENSIONS = {
    OpenAiEmbeddingModels.TEXT_EMBEDDING_3_SMALL: 1536,
    OpenAiEmbeddingModels.TEXT_EMBEDDING_3_LARGE: 3072,
    OpenAiEmbeddingModels.TEXT_EMBEDDING_ADA_002: 1536,
}
