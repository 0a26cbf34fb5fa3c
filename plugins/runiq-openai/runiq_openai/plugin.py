"""The ``runiq`` entry point: registers the ``openai`` embedding provider.

Importing this module is cheap: the openai SDK (about 1.7 s to import) loads when a host first opens
the provider, so hosts and commands that never use it do not pay for it.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from runiq.rag import ProviderRegistry, RagConfigurationError, hookimpl

from runiq_openai.options import OpenAiEmbeddingOptions
from runiq_openai.selection import PROVIDER_NAME

if TYPE_CHECKING:
    from runiq_openai.client import OpenAiEmbeddingClient

__all__ = ["open_openai_embedding", "runiq_register_providers"]


@asynccontextmanager
async def open_openai_embedding(options: OpenAiEmbeddingOptions) -> AsyncIterator[OpenAiEmbeddingClient]:
    """Read the API key, open one :class:`openai.AsyncOpenAI` and close it when the host stops.

    Raises:
        RagConfigurationError: no API key is configured (the message names the source, never a value).
    """
    source = options.secret_source()
    secret = await source.get_secret()
    if secret is None:
        raise RagConfigurationError(f"OpenAI embeddings need an API key; none is set in the {source.source}.")
    # The SDK's import is seconds of CPU: off the event loop, once per process.
    await asyncio.to_thread(importlib.import_module, "runiq_openai.client")
    import openai

    from runiq_openai.client import OpenAiEmbeddingClient

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
