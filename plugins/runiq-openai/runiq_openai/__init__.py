"""runiq-openai: OpenAI and OpenAI-compatible embeddings for runiq.

Example::

    from runiq_openai import OpenAiEmbedding, OpenAiEmbeddingModels

    index.use_embedding(OpenAiEmbedding(OpenAiEmbeddingModels.TEXT_EMBEDDING_3_SMALL))
"""

from __future__ import annotations

from runiq.secrets import EnvironmentSecretProvider, SecretProvider

from runiq_openai.client import OpenAiEmbeddingClient
from runiq_openai.models import OpenAiEmbeddingModels
from runiq_openai.options import OpenAiEmbeddingOptions
from runiq_openai.selection import OpenAiEmbedding, use_openai_embedding_model

__all__ = [
    "EnvironmentSecretProvider",
    "OpenAiEmbedding",
    "OpenAiEmbeddingClient",
    "OpenAiEmbeddingModels",
    "OpenAiEmbeddingOptions",
    "SecretProvider",
    "use_openai_embedding_model",
]
