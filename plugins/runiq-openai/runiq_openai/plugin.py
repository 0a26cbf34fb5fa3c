"""The ``runiq`` entry point: registers the ``openai`` embedding provider."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import openai
from runiq.rag import ProviderRegistry, hookimpl
from runiq.secrets import require_secret

from runiq_openai.client import OpenAiEmbeddingClient
from runiq_openai.options import OpenAiEmbeddingOptions
from runiq_openai.selection import PROVIDER_NAME

__all__ = ["open_openai_embedding", "runiq_register_providers"]


@asynccontextmanager
async def open_openai_embedding(options: OpenAiEmbeddingOptions) -> AsyncIterator[OpenAiEmbeddingClient]:
    """Read the API key, open one :class:`openai.AsyncOpenAI` and close it when the host stops.

    Raises:
        RagConfigurationError: no API key is configured (the message names the source, never a value).
    """
    secret = await require_secret(options.secret_source(), needed_by="The OpenAI embedding client")
    client = openai.AsyncOpenAI(
        api_key=secret.get_secret_value(),
        base_url=options.base_url,
        timeout=options.timeout,
        max_retries=options.max_retries,
    )
    try:
        yield OpenAiEmbeddingClient(client, options)
    finally:
        await client.close()


@hookimpl
def runiq_register_providers(registry: ProviderRegistry) -> None:
    registry.add_embedding(PROVIDER_NAME, open_openai_embedding, options=OpenAiEmbeddingOptions)
