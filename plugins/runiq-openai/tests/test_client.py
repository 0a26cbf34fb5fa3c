"""The OpenAI embedding client against a real local HTTP server: requests, batching, retries, errors."""

from __future__ import annotations

import base64
import json
import socket
import time

import numpy as np
import pytest
from runiq.errors import ProviderError, ProviderResponseError, ProviderTimeoutError, ProviderUnavailableError
from runiq.rag import RagConfigurationError
from runiq.rag.providers import EmbeddingInputKind
from runiq.rag.testing.fakes import CountingSecretProvider

from runiq_openai import OpenAiEmbeddingOptions
from runiq_openai.client import plan_requests
from runiq_openai.plugin import open_openai_embedding

DOC = EmbeddingInputKind.DOCUMENT


async def test_success_returns_the_servers_vectors_in_order(server, open_client) -> None:
    """Rows are the server's vectors for each input, float32, in input order; the request is well formed."""
    texts = ["remote work policy", "expense receipts", "travel"]
    async with open_client() as client:
        result = await client.embed(texts, DOC)
    assert result.dtype == np.float32
    assert result.shape == (3, 1536)
    np.testing.assert_allclose(result, server.expected(texts, 1536), atol=1e-7)
    [request] = server.requests
    assert request.inputs == texts
    assert request.model == "text-embedding-3-small"
    assert request.encoding_format == "base64"
    assert request.dimensions is None
    assert request.authorization == f"Bearer {server.api_key}"
    assert client.model_name == "openai:text-embedding-3-small"


async def test_reduced_dimensions_are_requested(server, open_client) -> None:
    """``dimensions`` is sent for text-embedding-3 models and sets the client's dimension."""
    async with open_client(model="text-embedding-3-large", dimensions=256) as client:
        result = await client.embed(["a b"], DOC)
        assert client.dimensions == 256
    assert result.shape == (1, 256)
    assert server.requests[0].dimensions == 256


async def test_ada_never_sends_dimensions(server, open_client) -> None:
    """text-embedding-ada-002 rejects the parameter, so it is left out even when it equals 1536."""
    async with open_client(model="text-embedding-ada-002", dimensions=1536) as client:
        await client.embed(["a"], DOC)
    assert server.requests[0].dimensions is None


@pytest.mark.parametrize("reply", [{"floats": True}, {"shuffle": True}])
async def test_float_and_out_of_order_answers_are_accepted(server, open_client, reply) -> None:
    """A server that ignores base64 or returns data out of order still yields rows in input order."""
    texts = [f"text number {i}" for i in range(6)]
    server.script(server.Scripted(**reply))
    async with open_client(dimensions=32) as client:
        result = await client.embed(texts, DOC)
    np.testing.assert_allclose(result, server.expected(texts, 32), atol=1e-6)


async def test_empty_strings_are_sent_as_one_space(server, open_client) -> None:
    """The API rejects empty strings; the client keeps the row by sending a space."""
    async with open_client(dimensions=16) as client:
        result = await client.embed(["", "word"], DOC)
    assert server.requests[0].inputs == [" ", "word"]
    assert result.shape == (2, 16)
    assert np.isfinite(result).all()


async def test_batching_splits_at_the_apis_2048_input_limit(server, open_client) -> None:
    """2050 texts become requests of 2048 and 2, and rows keep input order across requests."""
    texts = [f"doc {i}" for i in range(2050)]
    async with open_client(dimensions=8) as client:
        result = await client.embed(texts, DOC)
    assert sorted(server.sizes) == [2, 2048]
    np.testing.assert_allclose(result, server.expected(texts, 8), atol=1e-6)


async def test_batching_honours_configured_limits_and_the_token_budget(server, open_client) -> None:
    """``max_inputs_per_request`` and the byte-bounded token budget both split requests."""
    texts = [f"t{i:02d}" for i in range(7)]  # 3 bytes each
    async with open_client(dimensions=8, max_inputs_per_request=3) as client:
        result = await client.embed(texts, DOC)
    assert sorted(server.sizes) == [1, 3, 3]
    np.testing.assert_allclose(result, server.expected(texts, 8), atol=1e-6)
    server.reset()
    async with open_client(dimensions=8, max_tokens_per_request=7) as client:
        await client.embed(texts, DOC)
    assert sorted(server.sizes) == [1, 2, 2, 2]


def test_plan_requests_never_exceeds_a_limit() -> None:
    """Each planned slice is within both limits, unless it is a single oversized text."""
    texts = ["x" * n for n in (1, 5, 9, 2, 2, 2, 30, 1)]
    plan = plan_requests(texts, max_inputs=3, max_tokens=10)
    assert [t for part in plan for t in texts[part]] == texts
    for part in plan:
        chunk = texts[part]
        assert len(chunk) <= 3
        assert len(chunk) == 1 or sum(len(t) for t in chunk) <= 10
    assert plan_requests(["é" * 4], max_inputs=5, max_tokens=7) == [slice(0, 1)]
    assert plan_requests([], max_inputs=5, max_tokens=7) == []


async def test_requests_in_flight_are_bounded(server, open_client) -> None:
    """With ``max_concurrency=2`` no more than two requests are ever in flight."""
    server.delay = 0.1
    async with open_client(dimensions=8, max_inputs_per_request=1, max_concurrency=2) as client:
        await client.embed([f"t{i}" for i in range(6)], DOC)
    assert len(server.requests) == 6
    assert server.max_in_flight == 2


async def test_429_with_retry_after_is_retried_after_the_servers_delay(server, open_client) -> None:
    """A 429 with ``Retry-After: 1`` waits about a second (longer than the 0.5 s backoff) and succeeds."""
    server.script(server.Scripted(status=429, headers={"Retry-After": "1"}))
    started = time.monotonic()
    async with open_client(dimensions=8) as client:
        result = await client.embed(["a"], DOC)
    assert time.monotonic() - started >= 0.95
    assert result.shape == (1, 8)
    assert [r.retry_count for r in server.requests] == ["0", "1"]


async def test_500_then_success(server, open_client) -> None:
    """A server error is retried with backoff and the second answer is used."""
    server.script(server.Scripted(status=500))
    async with open_client(dimensions=8) as client:
        result = await client.embed(["a", "b"], DOC)
    assert len(server.requests) == 2
    np.testing.assert_allclose(result, server.expected(["a", "b"], 8), atol=1e-6)


async def test_retries_are_bounded_and_keep_the_status(server, open_client) -> None:
    """After ``max_retries`` more 429s the client fails with ProviderUnavailableError(status=429)."""
    server.script(*[server.Scripted(status=429, headers={"retry-after-ms": "10"})] * 3)
    async with open_client(dimensions=8, max_retries=2) as client:
        with pytest.raises(ProviderUnavailableError) as caught:
            await client.embed(["a"], DOC)
    assert caught.value.status == 429
    assert len(server.requests) == 3


async def test_timeout_raises_provider_timeout(server, open_client) -> None:
    """A server slower than ``timeout`` fails with ProviderTimeoutError (also a TimeoutError)."""
    server.script(server.Scripted(delay=1.5))
    async with open_client(dimensions=8, timeout=0.3, max_retries=0) as client:
        with pytest.raises(ProviderTimeoutError) as caught:
            await client.embed(["a"], DOC)
    assert isinstance(caught.value, TimeoutError)
    assert caught.value.timeout_seconds == pytest.approx(0.3)
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None  # the openai exception (and its request) is released


async def test_a_timed_out_attempt_is_retried(server, open_client) -> None:
    """One slow attempt, then a normal one: the call succeeds."""
    server.script(server.Scripted(delay=1.5))
    async with open_client(dimensions=8, timeout=0.3, max_retries=1) as client:
        result = await client.embed(["a"], DOC)
    assert result.shape == (1, 8)
    assert len(server.requests) == 2


def _b64(values: list[float]) -> str:
    return base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode()


def _body(data: object) -> bytes:
    return json.dumps({"object": "list", "data": data}).encode()


ZEROS = _b64([0.0] * 8)


MALFORMED = {
    "not json": b"<html>oops</html>",
    "no data": b'{"object": "list"}',
    "data not a list": _body("x"),
    "wrong count": _body([{"index": 0, "embedding": ZEROS}]),
    "duplicate index": _body([{"index": 0, "embedding": ZEROS}] * 2),
    "index out of range": _body([{"index": 0, "embedding": ZEROS}, {"index": 5, "embedding": ZEROS}]),
    "bool index": _body([{"index": True, "embedding": ZEROS}, {"index": 0, "embedding": ZEROS}]),
    "bad base64": _body([{"index": 0, "embedding": "!!!"}, {"index": 1, "embedding": "!!!"}]),
    "truncated base64": _body([{"index": i, "embedding": base64.b64encode(b"abcdef").decode()} for i in range(2)]),
    "strings in list": _body([{"index": i, "embedding": ["a"] * 8} for i in range(2)]),
    "nested list": _body([{"index": i, "embedding": [[0.0] * 8]} for i in range(2)]),
    "missing embedding": _body([{"index": i} for i in range(2)]),
    "nan": _body([{"index": i, "embedding": _b64([float("nan")] * 8)} for i in range(2)]),
}


@pytest.mark.parametrize("body", MALFORMED.values(), ids=MALFORMED.keys())
async def test_malformed_responses_raise_provider_response_error(server, open_client, body) -> None:
    """Whatever is wrong with a 200 body, the caller gets ProviderResponseError, never garbage rows."""
    server.script(server.Scripted(body=body))
    async with open_client(dimensions=8) as client:
        with pytest.raises(ProviderResponseError):
            await client.embed(["a", "b"], DOC)


async def test_wrong_dimension_raises_provider_response_error(server, open_client) -> None:
    """Vectors of another length than configured are refused, saying both lengths."""
    server.script(server.Scripted(dimensions=12))
    async with open_client(dimensions=8) as client:
        with pytest.raises(ProviderResponseError, match="12 dimensions where 8 are expected"):
            await client.embed(["a"], DOC)


async def test_rejected_credentials_raise_unavailable_with_status_401(
    server, open_client, monkeypatch, api_key_env
) -> None:
    """A 401 is not retried and becomes ProviderUnavailableError(status=401)."""
    monkeypatch.setenv(api_key_env, "sk-wrong-key")
    async with open_client(dimensions=8) as client:
        with pytest.raises(ProviderUnavailableError) as caught:
            await client.embed(["a"], DOC)
    assert caught.value.status == 401
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("status", "kind"), [(400, ProviderError), (404, ProviderError), (503, ProviderUnavailableError)]
)
async def test_status_codes_map_to_the_error_tree(server, open_client, status, kind) -> None:
    """4xx requests are not retried; 5xx are, then fail as unavailable; the status is kept."""
    server.script(*[server.Scripted(status=status)] * 2)
    async with open_client(dimensions=8, max_retries=1) as client:
        with pytest.raises(kind) as caught:
            await client.embed(["a"], DOC)
    assert caught.value.status == status
    assert len(server.requests) == (2 if status >= 500 else 1)


async def test_unreachable_server_raises_unavailable(api_key_env) -> None:
    """Nothing listening: ProviderUnavailableError, no status."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    options = OpenAiEmbeddingOptions(base_url=f"http://127.0.0.1:{port}/v1", api_key_env=api_key_env, max_retries=0)
    async with open_openai_embedding(options) as client:
        with pytest.raises(ProviderUnavailableError) as caught:
            await client.embed(["a"], DOC)
    assert caught.value.status is None


async def test_missing_key_names_the_variable_when_the_client_opens(monkeypatch) -> None:
    """No key: RagConfigurationError naming the environment variable, raised on open."""
    monkeypatch.delenv("RUNIQ_TEST_UNSET_KEY", raising=False)
    options = OpenAiEmbeddingOptions(api_key_env="RUNIQ_TEST_UNSET_KEY")
    with pytest.raises(RagConfigurationError, match="environment variable 'RUNIQ_TEST_UNSET_KEY'"):
        async with open_openai_embedding(options):
            pass


async def test_a_custom_secret_provider_supplies_the_key(server) -> None:
    """A SecretProvider replaces the environment variable; it is asked when the client opens."""
    vault = CountingSecretProvider(server.api_key)
    options = OpenAiEmbeddingOptions(base_url=server.url, secret_provider=vault, dimensions=8)
    assert vault.asked == 0
    async with open_openai_embedding(options) as client:
        assert vault.asked == 1
        await client.embed(["a"], DOC)
    assert vault.asked == 1
    assert server.requests[0].authorization == f"Bearer {server.api_key}"
