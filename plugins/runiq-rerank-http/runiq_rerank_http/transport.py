"""One rerank request over HTTP: POST, classify the outcome, retry what may succeed later.

Errors never carry what the provider said: its bodies can echo the query and documents (and a 401
body may echo part of the key), and httpx's exception texts name the URL. Every failure becomes a
fixed-message :class:`~runiq.rag.ProviderError` with the HTTP status as ``.status``, raised outside
any ``except`` block, so neither ``__cause__`` nor ``__context__`` holds the original exception.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import httpx
from runiq.errors import ProviderError, ProviderUnavailableError
from runiq.logging import get_logger
from runiq.rag.providers import RerankerTimeoutError

from runiq_rerank_http.credentials import BearerCredentials
from runiq_rerank_http.retry import RetryPolicy, is_retryable_status, parse_retry_after

__all__ = ["RerankTransport"]

log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class _Outcome:
    """What one attempt produced: a body (``status`` 200), or a failure to classify."""

    body: bytes | None = None
    status: int | None = None
    timed_out: bool = False
    retry_after: float | None = None

    @property
    def retryable(self) -> bool:
        return self.status is None or is_retryable_status(self.status)


def _status_error(provider: str, status: int) -> ProviderError:
    if status in (401, 403):
        return ProviderUnavailableError(provider, "the provider rejected the credentials", status=status)
    if status == 429:
        return ProviderUnavailableError(provider, "the provider is rate limiting requests", status=status)
    if is_retryable_status(status):
        return ProviderUnavailableError(provider, "the provider failed to answer", status=status)
    if status == 404:
        return ProviderError(provider, "the provider does not know this model or endpoint", status=status)
    if status == 413:
        return ProviderError(provider, "the provider refused a request this large", status=status)
    return ProviderError(provider, "the provider rejected the request", status=status)


class RerankTransport:
    """POSTs JSON bodies to one rerank endpoint with one :class:`httpx.AsyncClient`, retrying per ``retry``."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        url: str,
        retry: RetryPolicy,
        credentials: BearerCredentials,
        *,
        provider: str,
        timeout: float,
    ) -> None:
        self._client = client
        self._url = url
        self._retry = retry
        self._credentials = credentials
        self._provider = provider
        self._timeout = timeout

    async def post(self, body: dict[str, Any]) -> bytes:
        """The 2xx response body.

        Raises:
            RagConfigurationError: the backend needs an API key and none is configured.
            RerankerTimeoutError: the last attempt timed out (also a ``TimeoutError``).
            ProviderUnavailableError: unreachable, 401/403, 429, 408 or 5xx after the retries.
            ProviderError: any other status (``.status`` keeps it).
        """
        headers = await self._credentials.headers()
        retries = 0
        while True:
            outcome = await self._attempt(body, headers)
            if outcome.body is not None:
                return outcome.body
            delay = self._retry.delay(retries, outcome.retry_after) if outcome.retryable else None
            if delay is None:
                raise self._error(outcome)
            retries += 1
            log.info(
                "rerank_http.retrying",
                provider=self._provider,
                status=outcome.status,
                attempt=retries,
                timed_out=outcome.timed_out,
                delay_ms=round(delay * 1000),
            )
            await asyncio.sleep(delay)

    async def _attempt(self, body: dict[str, Any], headers: dict[str, str]) -> _Outcome:
        try:
            response = await self._client.post(self._url, json=body, headers=headers)
        except httpx.TimeoutException:
            return _Outcome(timed_out=True)
        except httpx.TransportError:  # connection refused or reset, DNS, TLS, protocol errors
            return _Outcome()
        if response.is_success:
            return _Outcome(body=response.content, status=response.status_code)
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        return _Outcome(status=response.status_code, retry_after=retry_after)

    def _error(self, outcome: _Outcome) -> ProviderError:
        if outcome.timed_out:
            return RerankerTimeoutError(self._provider, self._timeout)
        if outcome.status is None:
            return ProviderUnavailableError(self._provider, "the provider could not be reached")
        return _status_error(self._provider, outcome.status)
