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

from runiq.rag.providers import ProviderRegistry, hookimpl
from runiq.secrets import require_secret

from runiq_openai.options import OpenAiEmbeddingOptions
from runiq_openai.selection import PROVIDER_NAME

if TYPE_CHECKING:
    from runiq_openai.client import OpenAiEmbeddingClient, RequestHeaders

__all__ = ["KEYLESS_PLACEHOLDER", "open_openai_embedding", "runiq_register_providers"]

# The openai client refuses to be built without some key (and would read OPENAI_API_KEY when given
# none), so a keyless client gets this stand-in; every request then omits the Authorization header.
KEYLESS_PLACEHOLDER = "runiq-no-key"


@asynccontextmanager
async def open_openai_embedding(options: OpenAiEmbeddingOptions) -> AsyncIterator[OpenAiEmbeddingClient]:
    """Read the API key (when the server gets one), open one :class:`openai.AsyncOpenAI`, learn the
    vector length when none is declared (one embedding call), and close the client when the host stops.

    The host opens a provider once, on the first use of an index that needs it, and shares it between
    indexes with equal options; so a server is probed once per live client, and the length is fixed
    for the client's life.

    Raises:
        RagConfigurationError: a key is expected and none is configured (the message names the
            source, never a value).
        ProviderError: the probe failed (the server is unreachable, refuses the model, or answers
            with no usable vector).
    """
    base_url = options.request_base_url()  # read once: the key rule and the client see the same server
    source = options.secret_source(base_url)
    api_key = KEYLESS_PLACEHOLDER
    if source is not None:
        api_key = (await require_secret(source, needed_by="The OpenAI embedding client")).get_secret_value()
    # The SDK's import is seconds of CPU: off the event loop, once per process.
    await asyncio.to_thread(importlib.import_module, "runiq_openai.client")
    import openai

    from runiq_openai.client import OpenAiEmbeddingClient, probe_dimensions

    headers: RequestHeaders = {} if source is not None else {"Authorization": openai.Omit()}
    client = openai.AsyncOpenAI(
        api_key=api_key, base_url=base_url, timeout=options.timeout, max_retries=options.max_retries
    )
    try:
        dimensions = options.declared_dimensions or await probe_dimensions(client, options, headers)
        yield OpenAiEmbeddingClient(client, options, dimensions=dimensions, headers=headers)
    finally:
        await client.close()


@hookimpl
def runiq_register_providers(registry: ProviderRegistry) -> None:
    registry.add_embedding(PROVIDER_NAME, open_openai_embedding, options=OpenAiEmbeddingOptions)
