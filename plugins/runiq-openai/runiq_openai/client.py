"""The OpenAI embedding client: request planning, the HTTP call, error mapping and response checks.

Retries are the openai client's own (``max_retries`` on :class:`openai.AsyncOpenAI`): it retries
timeouts, connection errors, 408, 409, 429 and 5xx, waits what ``Retry-After``/``retry-after-ms``
says (up to two minutes) or backs off exponentially (0.5 s doubling to 8 s, minus up to 25 % jitter),
and rewinds the request body for each attempt. Layering tenacity on top would retry the retries
(attempts multiply); replacing it (``max_retries=0`` plus tenacity) would re-implement the
``Retry-After``/``retry-after-ms``/``x-should-retry`` handling the client already keeps current.

The vector length is known before the client is built (:func:`probe_dimensions` asks the server
once when none is declared), and every response is checked against it.

Errors never carry what the provider said: its bodies can echo the input (and a 401 body echoes part
of the key), and the openai exception also holds the request, Authorization header included. So
every failure becomes a fixed-message :class:`~runiq.rag.ProviderError` with the HTTP status kept as
``.status``, raised outside the ``except`` block (:func:`runiq.errors.translated`): it has no
``__cause__`` or ``__context__``, and the openai exception is released.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import openai
from runiq.errors import (
    ProviderError,
    ProviderResponseError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    call_translated,
    first_leaf,
    translated,
)
from runiq.rag.providers import EmbeddingInputKind

from runiq_openai.options import MAX_DIMENSIONS, OpenAiEmbeddingOptions
from runiq_openai.selection import PROVIDER_NAME

__all__ = ["OpenAiEmbeddingClient", "parse_embedding_response", "plan_requests", "probe_dimensions"]

FloatMatrix = npt.NDArray[np.float32]
# Headers added to every request: {"Authorization": openai.Omit()} for a server that gets no key.
RequestHeaders = Mapping[str, str | openai.Omit]

# The API rejects an empty string; one space embeds as "no content" and keeps the row.
_EMPTY_INPUT_STANDIN = " "
# What the probe embeds: a fixed text of runiq's own, never a user's content.
PROBE_TEXT = "runiq dimension probe"


def plan_requests(texts: Sequence[str], max_inputs: int, max_tokens: int) -> list[slice]:
    """Split ``texts`` into consecutive request slices within the per-request input and token limits.

    Tokens are bounded from above by UTF-8 bytes (every BPE token covers at least one byte), so no
    tokenizer is needed and a planned request can never exceed ``max_tokens``. A single text larger
    than the budget still goes alone: the per-input limit is the chunker's business.
    """
    slices: list[slice] = []
    start, count, budget = 0, 0, 0
    for position, text in enumerate(texts):
        cost = max(1, len(text.encode("utf-8")))
        if count and (count >= max_inputs or budget + cost > max_tokens):
            slices.append(slice(start, position))
            start, count, budget = position, 0, 0
        count += 1
        budget += cost
    if count:
        slices.append(slice(start, len(texts)))
    return slices


def _malformed(reason: str = "the provider returned a malformed embedding response") -> ProviderResponseError:
    return ProviderResponseError(PROVIDER_NAME, reason)


def _undecodable(exc: Exception) -> ProviderResponseError:
    return _malformed()


def _not_json(exc: Exception) -> ProviderResponseError:
    # Never chained: a JSONDecodeError holds the whole body (``.doc``), which can echo the input.
    return _malformed("the provider returned a response that is not JSON")


def _vector(value: Any) -> npt.NDArray[np.float32]:
    if isinstance(value, str):  # encoding_format="base64": little-endian float32 bytes
        raw = call_translated(lambda: base64.b64decode(value, validate=True), _undecodable)
        if len(raw) % 4:
            raise _malformed()
        return np.frombuffer(raw, dtype="<f4").astype(np.float32, copy=False)
    if isinstance(value, list):  # a server that ignores encoding_format answers with floats
        array = call_translated(lambda: np.asarray(value), _undecodable)
        if array.ndim != 1 or array.dtype.kind not in "fiu":
            raise _malformed()
        return array.astype(np.float32)
    raise _malformed()


def parse_embedding_response(body: bytes, count: int, dimensions: int) -> FloatMatrix:
    """Turn an ``/embeddings`` response body into a ``(count, dimensions)`` float32 matrix in input order.

    Raises:
        ProviderResponseError: the body is not JSON, lacks the embedding list, has the wrong count,
            missing/duplicate/out-of-range indexes, undecodable vectors, another dimension, or NaN/inf.
    """
    payload = call_translated(lambda: json.loads(body), _not_json)
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise _malformed()
    if len(data) != count:
        raise _malformed("the provider returned a result count that does not match the batch")
    out = np.empty((count, dimensions), dtype=np.float32)
    seen = np.zeros(count, dtype=bool)
    for item in data:
        index = item.get("index") if isinstance(item, dict) else None
        if type(index) is not int or not 0 <= index < count or seen[index]:
            raise _malformed("the provider returned missing or duplicate embedding indexes")
        vector = _vector(item.get("embedding"))
        if vector.shape != (dimensions,):
            raise _malformed(
                f"the provider returned vectors of {vector.size} dimensions where {dimensions} are expected; "
                "declare the model's own dimensions, or none to probe them"
            )
        out[index] = vector
        seen[index] = True
    if not np.isfinite(out).all():
        raise _malformed("the provider returned non-finite values")
    return out


def _request_failed(exc: Exception, *, timeout: float) -> ProviderError:
    """The content-free error for a failed request: only the exception's class and HTTP status are read."""
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, openai.APITimeoutError):
        return ProviderTimeoutError(PROVIDER_NAME, timeout)
    if isinstance(exc, openai.APIStatusError):
        return _status_error(exc.status_code)
    if isinstance(exc, openai.APIConnectionError):
        return ProviderUnavailableError(PROVIDER_NAME, "the provider could not be reached")
    return ProviderError(PROVIDER_NAME)


def _status_error(status: int) -> ProviderError:
    if status in (401, 403):
        return ProviderUnavailableError(PROVIDER_NAME, "the provider rejected the credentials", status=status)
    if status == 429:
        return ProviderUnavailableError(PROVIDER_NAME, "the provider is rate limiting requests", status=status)
    if status >= 500 or status in (408, 409):
        return ProviderUnavailableError(PROVIDER_NAME, "the provider failed to answer", status=status)
    if status == 404:
        return ProviderError(PROVIDER_NAME, "the provider does not know this model or endpoint", status=status)
    return ProviderError(PROVIDER_NAME, "the provider rejected the request", status=status)


async def post_embeddings(
    client: openai.AsyncOpenAI, options: OpenAiEmbeddingOptions, inputs: list[str], headers: RequestHeaders
) -> bytes:
    """One ``/embeddings`` request; the raw body, or a content-free :class:`~runiq.rag.ProviderError`."""

    async def post() -> bytes:
        extra: dict[str, Any] = {}
        if options.request_dimensions is not None:
            extra["dimensions"] = options.request_dimensions
        response = await client.embeddings.with_raw_response.create(
            input=inputs, model=options.model, encoding_format="base64", extra_headers=headers, **extra
        )
        return response.content

    return await translated(post, functools.partial(_request_failed, timeout=options.timeout))


def _probed_length(body: bytes) -> int:
    payload = call_translated(lambda: json.loads(body), _not_json)
    data = payload.get("data") if isinstance(payload, dict) else None
    first = data[0] if isinstance(data, list) and data else None
    length = _vector(first.get("embedding")).size if isinstance(first, dict) else 0
    if not 1 <= length <= MAX_DIMENSIONS:
        raise _malformed("the provider returned no usable vector to learn its dimensions from")
    return length


async def probe_dimensions(client: openai.AsyncOpenAI, options: OpenAiEmbeddingOptions, headers: RequestHeaders) -> int:
    """The model's vector length, from one embedding of :data:`PROBE_TEXT` (the whole answer is checked).

    Raises:
        ProviderError: the request failed, or the answer holds no valid vector (``ProviderResponseError``).
    """
    body = await post_embeddings(client, options, [PROBE_TEXT], headers)
    dimensions = _probed_length(body)
    parse_embedding_response(body, 1, dimensions)
    return dimensions


class OpenAiEmbeddingClient:
    """An :class:`~runiq.rag.EmbeddingClient` over one open :class:`openai.AsyncOpenAI`.

    One ``embed`` call may become several HTTP requests (the endpoint's own input and token limits);
    at most ``max_concurrency`` requests of this client are in flight at once, across all callers.
    """

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        options: OpenAiEmbeddingOptions,
        *,
        dimensions: int,
        headers: RequestHeaders | None = None,
    ) -> None:
        self._client = client
        self._options = options
        self._dimensions = dimensions
        self._headers: RequestHeaders = headers or {}
        self._semaphore = asyncio.Semaphore(options.max_concurrency)

    @property
    def model_name(self) -> str:
        return f"openai:{self._options.model}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
        if not texts:
            return np.empty((0, self._dimensions), dtype=np.float32)
        plan = plan_requests(texts, self._options.max_inputs_per_request, self._options.max_tokens_per_request)
        if len(plan) == 1:
            return await self._request(texts)
        # One failed request fails the call; the group's first failure is raised on its own.
        return await translated(lambda: self._requests(texts, plan), first_leaf)

    async def _requests(self, texts: Sequence[str], plan: list[slice]) -> FloatMatrix:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(self._request(texts[part])) for part in plan]
        return np.vstack([task.result() for task in tasks])

    async def _request(self, batch: Sequence[str]) -> FloatMatrix:
        inputs = [text if text else _EMPTY_INPUT_STANDIN for text in batch]
        async with self._semaphore:
            body = await post_embeddings(self._client, self._options, inputs, self._headers)
        return parse_embedding_response(body, len(batch), self._dimensions)
