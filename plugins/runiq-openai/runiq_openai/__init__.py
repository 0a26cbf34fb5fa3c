"""runiq-openai: OpenAI and OpenAI-compatible embeddings for runiq.

Example::

    from runiq_openai import OpenAiEmbedding, OpenAiEmbeddingModels

    index.use_embedding(OpenAiEmbedding(OpenAiEmbeddingModels.TEXT_EMBEDDING_3_SMALL))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runiq.secrets import EnvironmentSecretProvider, SecretProvider

from runiq_openai.models import OpenAiEmbeddingModels
from runiq_openai.options import OpenAiEmbeddingOptions
from runiq_openai.selection import OpenAiEmbedding, use_openai_embedding_model

if TYPE_CHECKING:
    from runiq_openai.client import OpenAiEmbeddingClient

__all__ = [
    "EnvironmentSecretProvider",
    "OpenAiEmbedding",
    "OpenAiEmbeddingClient",
    "OpenAiEmbeddingModels",
    "OpenAiEmbeddingOptions",
    "SecretProvider",
    "use_openai_embedding_model",
]


if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any attribute

    def __getattr__(name: str) -> object:
        """``OpenAiEmbeddingClient`` loads on first use (PEP 562): its module imports the openai SDK."""
        if name == "OpenAiEmbeddingClient":
            from runiq_openai.client import OpenAiEmbeddingClient

            return OpenAiEmbeddingClient
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
