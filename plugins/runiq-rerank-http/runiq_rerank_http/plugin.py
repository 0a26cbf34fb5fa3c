"""The ``runiq`` entry point: registers the ``rerank-http`` reranker provider (remote: needs approval).

Importing this module is cheap: httpx and the transport load when a host first opens the provider.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from runiq.rag.providers import ProviderRegistry, hookimpl

from runiq_rerank_http.options import PROVIDER_NAME, HttpRerankerOptions

if TYPE_CHECKING:
    from runiq_rerank_http.reranker import HttpReranker

__all__ = ["open_http_reranker", "runiq_register_providers"]


@asynccontextmanager
async def open_http_reranker(options: HttpRerankerOptions) -> AsyncIterator[HttpReranker]:
    """Open one :class:`httpx.AsyncClient` for the reranker and close it when the host stops.

    No I/O and no key is read here: the key is read on the first rerank call (see ``credentials``).
    """
    await asyncio.to_thread(importlib.import_module, "runiq_rerank_http.reranker")  # httpx: once per process
    import httpx

    from runiq_rerank_http.credentials import BearerCredentials
    from runiq_rerank_http.reranker import HttpReranker
    from runiq_rerank_http.retry import RetryPolicy
    from runiq_rerank_http.transport import RerankTransport

    limits = httpx.Limits(max_connections=options.max_concurrency, max_keepalive_connections=options.max_concurrency)
    client = httpx.AsyncClient(timeout=httpx.Timeout(options.timeout), limits=limits, follow_redirects=False)
    retry = RetryPolicy(max_retries=options.max_retries, max_wait=options.max_retry_wait)
    credentials = BearerCredentials(options.secret_source(), label=f"{options.backend.value} reranker")
    transport = RerankTransport(
        client, options.url, retry, credentials, provider=PROVIDER_NAME, timeout=options.timeout
    )
    try:
        yield HttpReranker(transport, options)
    finally:
        await client.aclose()


@hookimpl
def runiq_register_providers(registry: ProviderRegistry) -> None:
    # Remote: the query and candidate text leave the host, so an index needs use_reranker(..., approved=True).
    registry.add_reranker(PROVIDER_NAME, open_http_reranker, options=HttpRerankerOptions, remote=True)
