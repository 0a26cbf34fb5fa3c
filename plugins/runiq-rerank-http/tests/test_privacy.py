"""Canaries: neither the query, the content nor the API key reaches a log record or any raised error.

The fake server echoes the request (and the presented key) in every error body. Each failure is
checked in every log record (structlog and stdlib, DEBUG and up, so httpx's and httpcore's too) and in
the raised error: its text, repr, args, traceback, and the whole ``__cause__``/``__context__`` chain,
which must be empty (errors are raised outside ``except`` blocks).
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterator

import pytest
import structlog
from runiq.errors import ProviderError
from runiq.rag import RagConfigurationError

from runiq_rerank_http import HttpRerankerOptions, HttpReranking, RerankBackend
from runiq_rerank_http.plugin import open_http_reranker


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    stack = [error]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)


def _rendered(error: BaseException) -> str:
    parts = []
    for link in _chain(error):
        parts += [str(link), repr(link), repr(link.args), repr(vars(link))]
    parts.append("".join(traceback.format_exception(error)))
    return "\n".join(parts)


CASES = {
    "400": (RerankBackend.COHERE, {"status": 400}, {}),
    "500-retried": (RerankBackend.TEI, {"status": 500, "headers": {"Retry-After": "0"}}, {}),
    "429": (RerankBackend.JINA, {"status": 429, "headers": {"Retry-After": "0"}}, {}),
    "malformed": (RerankBackend.INFINITY, {"body": b'{"results": "CANARY-7f3a9c-SECRET-CONTENT"}'}, {}),
    "not-json": (RerankBackend.VLLM, {"body": b"CANARY-7f3a9c-SECRET-CONTENT refund window"}, {}),
    "bad-index": (RerankBackend.COHERE, {"items": lambda items: [i | {"index": 9} for i in items]}, {}),
    "timeout": (RerankBackend.TEI, {"delay": 1.0}, {"timeout": 0.2}),
    "batch-fails": (RerankBackend.VLLM, {"status": 422}, {"max_documents_per_request": 1}),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_errors_and_logs_never_contain_query_content_or_key(
    server, open_reranker, make_request, canary, caplog, case
) -> None:
    """The server echoes everything it got; none of it leaves the reranker, in any error or log."""
    backend, reply, options = CASES[case]
    caplog.set_level(logging.DEBUG)
    server.script(*[server.Scripted(**reply)] * 3)
    request = make_request(f"{canary} refund window?", f"The refund window is 30 days. {canary}", "other text")
    with structlog.testing.capture_logs() as events:
        async with open_reranker(backend, max_retries=1, **options) as reranker:
            with pytest.raises(ProviderError) as caught:
                await reranker.rerank(request)
    error = caught.value
    assert error.__cause__ is None
    assert error.__context__ is None
    rendered = _rendered(error)
    logs = caplog.text + repr([r.__dict__ for r in caplog.records]) + repr(events)
    for secret in (canary, server.api_key):
        assert secret not in rendered
        assert secret not in logs
    assert server.requests  # the request was really sent (and echoed back)


async def test_a_401_body_echoing_the_key_is_not_copied(
    server, open_reranker, make_request, monkeypatch, api_key_env, caplog
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong_key = "sk-wrong-KEYCANARY-5e11b0"
    monkeypatch.setenv(api_key_env, wrong_key)
    async with open_reranker(RerankBackend.COHERE) as reranker:
        with pytest.raises(ProviderError) as caught:
            await reranker.rerank(make_request("q", "a"))
    assert caught.value.status == 401
    assert wrong_key not in _rendered(caught.value)
    assert wrong_key not in caplog.text + repr([r.__dict__ for r in caplog.records])


async def test_options_selections_and_rerankers_never_show_the_key(server, open_reranker, api_key_env) -> None:
    """Options and selections hold a variable's name only; the live reranker's repr has no key either."""
    options = HttpRerankerOptions(backend=RerankBackend.COHERE, api_key_env=api_key_env)
    selection = HttpReranking("cohere", api_key_env=api_key_env)
    shown = repr(options) + str(options.model_dump()) + repr(selection) + selection.display_name
    async with open_reranker(RerankBackend.COHERE) as reranker:
        shown += repr(reranker) + repr(vars(reranker))
    assert server.api_key not in shown


async def test_a_missing_key_error_names_the_source_not_a_value(monkeypatch, make_request) -> None:
    monkeypatch.setenv("RUNIQ_TEST_EMPTY_KEY", "   ")
    options = HttpRerankerOptions(backend=RerankBackend.JINA, api_key_env="RUNIQ_TEST_EMPTY_KEY")
    async with open_http_reranker(options) as reranker:
        with pytest.raises(RagConfigurationError, match="RUNIQ_TEST_EMPTY_KEY") as caught:
            await reranker.rerank(make_request("q", "a"))
    assert caught.value.__context__ is None
