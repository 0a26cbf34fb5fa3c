"""Batching, concurrency, timeouts, retries honouring Retry-After, status mapping and keys, on a real local server."""

from __future__ import annotations

import socket
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from runiq.errors import ProviderError, ProviderUnavailableError
from runiq.rag import RagConfigurationError
from runiq.rag.providers import RerankerTimeoutError
from runiq.rag.testing.fakes import CountingSecretProvider

from runiq_rerank_http import HttpRerankerOptions, RerankBackend
from runiq_rerank_http.plugin import open_http_reranker
from runiq_rerank_http.reranker import batches
from runiq_rerank_http.retry import RetryPolicy, parse_retry_after

TEI, COHERE = RerankBackend.TEI, RerankBackend.COHERE


def _documents(count: int) -> list[str]:
    return [f"remote work note {i}" if i % 3 == 0 else f"unrelated text {i}" for i in range(count)]


async def test_tei_batches_at_its_client_batch_limit_and_merges_in_order(server, open_reranker, make_request) -> None:
    """70 candidates become TEI requests of 32, 32 and 6 texts; every relevance lands on its own candidate."""
    documents = _documents(70)
    async with open_reranker(TEI) as reranker:
        response = await reranker.rerank(make_request("remote work", *documents))
    assert sorted(len(r.documents) for r in server.requests) == [6, 32, 32]
    sent = sorted((r.documents for r in server.requests), key=lambda docs: documents.index(docs[0]))
    assert [d for batch in sent for d in batch] == documents
    expected = [server.probability("remote work", d) for d in documents]
    assert [r.relevance for r in response.candidates] == pytest.approx(expected, abs=1e-12)
    assert [r.document_id for r in response.candidates] == [f"d{i}.md" for i in range(1, 71)]


async def test_without_batching_tei_refuses_the_request(server, open_reranker, make_request) -> None:
    """The fake enforces TEI's limit: 33 texts in one request is a 413, kept as the status, not retried."""
    async with open_reranker(TEI, max_documents_per_request=33) as reranker:
        with pytest.raises(ProviderError) as caught:
            await reranker.rerank(make_request("q", *_documents(33)))
    assert caught.value.status == 413
    assert len(server.requests) == 1


async def test_configured_batch_size_and_concurrency_bound(server, open_reranker, make_request) -> None:
    """max_documents_per_request=2 splits 9 candidates into 5 requests, never more than 2 in flight."""
    server.delay = 0.1
    async with open_reranker(COHERE, max_documents_per_request=2, max_concurrency=2) as reranker:
        response = await reranker.rerank(make_request("remote work", *_documents(9)))
    assert sorted(len(r.documents) for r in server.requests) == [1, 2, 2, 2, 2]
    assert {r.payload["top_n"] for r in server.requests} == {1, 2}
    assert 1 <= server.max_in_flight <= 2  # the bound; on a loaded machine the two may not overlap
    assert len(response.candidates) == 9


def test_batches_cover_every_position_once() -> None:
    assert batches(5, 2) == [slice(0, 2), slice(2, 4), slice(4, 5)]
    assert batches(4, 4) == [slice(0, 4)]
    assert batches(1, 32) == [slice(0, 1)]


async def test_one_failing_batch_fails_the_call(server, open_reranker, make_request) -> None:
    """All or nothing: a 400 on any batch is the call's error (the policy then falls back or fails)."""
    server.script(server.Scripted(), server.Scripted(status=400))
    async with open_reranker(COHERE, max_documents_per_request=1, max_concurrency=1) as reranker:
        with pytest.raises(ProviderError) as caught:
            await reranker.rerank(make_request("q", "a", "b", "c"))
    assert caught.value.status == 400


async def test_429_retry_after_seconds_is_honoured(server, open_reranker, make_request) -> None:
    """Retry-After: 1 waits about a second (twice the first backoff) and the retry succeeds."""
    server.script(server.Scripted(status=429, headers={"Retry-After": "1"}))
    started = time.monotonic()
    async with open_reranker(COHERE) as reranker:
        response = await reranker.rerank(make_request("remote work", "remote work"))
    assert time.monotonic() - started >= 0.95
    assert len(server.requests) == 2
    assert response.candidates[0].relevance > 0.9


async def test_503_retry_after_http_date_is_honoured(server, open_reranker, make_request) -> None:
    """An HTTP-date Retry-After is a wait until then (here about 1-2 s, the date has whole seconds)."""
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=2), usegmt=True)
    server.script(server.Scripted(status=503, headers={"Retry-After": when}))
    started = time.monotonic()
    async with open_reranker(TEI) as reranker:
        await reranker.rerank(make_request("q", "a"))
    assert time.monotonic() - started >= 0.95
    assert len(server.requests) == 2


async def test_a_retry_after_beyond_max_retry_wait_fails_at_once(server, open_reranker, make_request) -> None:
    """Retry-After: 120 with max_retry_wait=5: no waiting out the policy's deadline; 429 kept as the status."""
    server.script(server.Scripted(status=429, headers={"Retry-After": "120"}))
    started = time.monotonic()
    async with open_reranker(COHERE, max_retry_wait=5) as reranker:
        with pytest.raises(ProviderUnavailableError) as caught:
            await reranker.rerank(make_request("q", "a"))
    assert time.monotonic() - started < 5
    assert caught.value.status == 429
    assert len(server.requests) == 1


async def test_retries_are_bounded_and_keep_the_status(server, open_reranker, make_request) -> None:
    """500 on every attempt: 1 + max_retries requests, then ProviderUnavailableError(status=500)."""
    server.script(*[server.Scripted(status=500, headers={"Retry-After": "0"})] * 3)
    async with open_reranker(TEI, max_retries=2) as reranker:
        with pytest.raises(ProviderUnavailableError) as caught:
            await reranker.rerank(make_request("q", "a"))
    assert caught.value.status == 500
    assert len(server.requests) == 3


async def test_5xx_then_success_uses_backoff(server, open_reranker, make_request) -> None:
    """Without Retry-After the client backs off (0.375-0.5 s for the first retry) and uses the next answer."""
    server.script(server.Scripted(status=502))
    started = time.monotonic()
    async with open_reranker(RerankBackend.VLLM) as reranker:
        response = await reranker.rerank(make_request("remote work", "remote work"))
    assert time.monotonic() - started >= 0.35
    assert len(server.requests) == 2
    assert len(response.candidates) == 1


@pytest.mark.parametrize(
    ("status", "kind", "reason"),
    [
        (400, ProviderError, "rejected the request"),
        (404, ProviderError, "does not know this model or endpoint"),
        (422, ProviderError, "rejected the request"),
        (403, ProviderUnavailableError, "rejected the credentials"),
    ],
)
async def test_client_errors_are_not_retried(server, open_reranker, make_request, status, kind, reason) -> None:
    """4xx (but 408/429) mean the request or the key is wrong: one attempt, the status kept, a fixed reason."""
    server.script(*[server.Scripted(status=status)] * 2)
    async with open_reranker(RerankBackend.JINA) as reranker:
        with pytest.raises(kind, match=reason) as caught:
            await reranker.rerank(make_request("q", "a"))
    assert caught.value.status == status
    assert len(server.requests) == 1


async def test_a_wrong_key_is_401_unavailable(server, open_reranker, make_request, monkeypatch, api_key_env) -> None:
    monkeypatch.setenv(api_key_env, "sk-wrong")
    async with open_reranker(COHERE) as reranker:
        with pytest.raises(ProviderUnavailableError, match="rejected the credentials") as caught:
            await reranker.rerank(make_request("q", "a"))
    assert caught.value.status == 401


async def test_a_timeout_is_retried_then_raises_reranker_timeout(server, open_reranker, make_request) -> None:
    """Each attempt is bounded by ``timeout``; after the retries the error is a RerankerTimeoutError."""
    server.delay = 1.0
    started = time.monotonic()
    async with open_reranker(TEI, timeout=0.2, max_retries=1) as reranker:
        with pytest.raises(RerankerTimeoutError) as caught:
            await reranker.rerank(make_request("q", "a"))
    assert isinstance(caught.value, TimeoutError)
    assert caught.value.timeout_seconds == 0.2
    assert len(server.requests) == 2
    assert time.monotonic() - started < 3


async def test_an_unreachable_server_is_unavailable(api_key_env, make_request) -> None:
    """Nothing listening: ProviderUnavailableError without a status, after the retries."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    options = HttpRerankerOptions(backend=TEI, base_url=f"http://127.0.0.1:{port}", max_retries=1, max_retry_wait=0)
    async with open_http_reranker(options) as reranker:
        with pytest.raises(ProviderUnavailableError, match="could not be reached") as caught:
            await reranker.rerank(make_request("q", "a"))
    assert caught.value.status is None


@pytest.mark.parametrize(("backend", "variable"), [(COHERE, "CO_API_KEY"), (RerankBackend.JINA, "JINA_API_KEY")])
async def test_hosted_apis_need_a_key_on_first_use(monkeypatch, make_request, backend, variable) -> None:
    """Cohere and Jina read their documented variables: opening reads nothing; the first call without a
    key is a RagConfigurationError naming the variable, and nothing is sent."""
    monkeypatch.delenv(variable, raising=False)
    async with open_http_reranker(HttpRerankerOptions(backend=backend, base_url="http://127.0.0.1:9")) as reranker:
        with pytest.raises(RagConfigurationError, match=f"environment variable '{variable}'") as caught:
            await reranker.rerank(make_request("q", "a"))
    assert caught.value.__context__ is None


async def test_a_key_set_after_a_failure_is_used(server, monkeypatch, make_request) -> None:
    """Until a key is found the source is asked again, so setting it fixes a running host."""
    monkeypatch.delenv("RUNIQ_TEST_LATE_KEY", raising=False)
    options = HttpRerankerOptions(backend=COHERE, base_url=server.url(COHERE), api_key_env="RUNIQ_TEST_LATE_KEY")
    async with open_http_reranker(options) as reranker:
        with pytest.raises(RagConfigurationError):
            await reranker.rerank(make_request("q", "a"))
        monkeypatch.setenv("RUNIQ_TEST_LATE_KEY", server.api_key)
        await reranker.rerank(make_request("q", "a"))
    assert [r.authorization for r in server.requests] == [f"Bearer {server.api_key}"]


async def test_a_configured_key_for_a_self_hosted_server_must_exist(monkeypatch, make_request) -> None:
    """api_key_env on TEI means "send this key": unset is a configuration error, not a keyless request."""
    monkeypatch.delenv("RUNIQ_TEST_UNSET_KEY", raising=False)
    options = HttpRerankerOptions(backend=TEI, base_url="http://127.0.0.1:9", api_key_env="RUNIQ_TEST_UNSET_KEY")
    async with open_http_reranker(options) as reranker:
        with pytest.raises(RagConfigurationError, match="RUNIQ_TEST_UNSET_KEY"):
            await reranker.rerank(make_request("q", "a"))


async def test_a_secret_provider_supplies_the_key_once(server, make_request) -> None:
    """A SecretProvider replaces the environment variable; it is asked once, on the first call."""
    vault = CountingSecretProvider(server.api_key)
    options = HttpRerankerOptions(backend=COHERE, base_url=server.url(COHERE), secret_provider=vault)
    async with open_http_reranker(options) as reranker:
        assert vault.asked == 0
        await reranker.rerank(make_request("q", "a", "b", "c"))
        await reranker.rerank(make_request("q", "b"))
    assert vault.asked == 1
    assert [r.authorization for r in server.requests] == [f"Bearer {server.api_key}"] * 2


def test_parse_retry_after() -> None:
    """delay-seconds (also fractional), an HTTP-date (past dates are 0), and nonsense ignored."""
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("3", now) == 3.0
    assert parse_retry_after(" 1.5 ", now) == 1.5
    assert parse_retry_after("Wed, 01 Jan 2025 12:00:10 GMT", now) == 10.0
    assert parse_retry_after("Wed, 01 Jan 2025 11:00:00 GMT", now) == 0.0
    for bad in (None, "", "soon", "-1", "nan", "inf"):
        assert parse_retry_after(bad, now) is None


def test_retry_policy_backs_off_with_jitter_and_gives_up() -> None:
    """0.5 s doubling to 8 s, minus at most 25 %; Retry-After wins when it fits max_wait; retries bounded."""
    policy = RetryPolicy(max_retries=6, max_wait=10)
    for done, full in enumerate([0.5, 1.0, 2.0, 4.0, 8.0, 8.0]):
        delay = policy.delay(done, None)
        assert delay is not None
        assert 0.75 * full <= delay <= full
    assert policy.delay(6, None) is None
    assert policy.delay(0, 7.0) == 7.0
    assert policy.delay(0, 11.0) is None
    assert RetryPolicy(max_retries=0, max_wait=10).delay(0, 1.0) is None
