"""Canaries: neither the input text nor the API key reaches an error's text, its chain, a traceback or a log line."""

from __future__ import annotations

import logging
import socket
import traceback

import pytest
import structlog
from runiq.errors import ProviderError, ProviderUnavailableError
from runiq.rag import RagConfigurationError
from runiq.rag.providers import EmbeddingInputKind
from runiq.rag.testing.chains import assert_content_free

from runiq_openai import OpenAiEmbeddingOptions
from runiq_openai.plugin import open_openai_embedding


def _rendered(exc: BaseException) -> str:
    return "\n".join([str(exc), repr(exc), "".join(traceback.format_exception(exc))])


@pytest.mark.parametrize(
    "reply",
    [
        {"status": 400},
        {"status": 500},
        {"status": 429, "headers": {"retry-after-ms": "1"}},
        {"body": b'{"data": "CANARY-7f3a9c-SECRET-CONTENT"}'},
        {"body": b"<html>CANARY-7f3a9c-SECRET-CONTENT</html>"},
        {"body": b'{"data": [{"index": 0, "embedding": "CANARY-7f3a9c-SECRET-CONTENT"}, {"index": 1}]}'},
        {"delay": 1.0},
    ],
    ids=["400", "500", "429", "malformed", "not-json", "not-base64", "timeout"],
)
async def test_errors_and_logs_never_contain_input_or_key(server, open_client, canary, caplog, reply) -> None:
    """The server echoes the input in every error body; none of it (nor the key) leaves the client."""
    caplog.set_level(logging.DEBUG)
    server.script(*[server.Scripted(**reply)] * 2)
    with structlog.testing.capture_logs() as events:
        async with open_client(dimensions=8, timeout=0.3, max_retries=1) as client:
            with pytest.raises(ProviderError) as caught:
                await client.embed([f"confidential {canary}", "other"], EmbeddingInputKind.DOCUMENT)
    rendered = _rendered(caught.value)
    logs = caplog.text + repr(events)
    for secret in (canary, server.api_key):
        assert secret not in rendered
        assert secret not in logs
    error = caught.value
    assert error.__cause__ is None
    assert error.__context__ is None  # ``from None`` would only hide the openai exception, body and key
    assert_content_free(error, canary, server.api_key)


async def test_a_failure_among_several_requests_keeps_nothing_chained(server, open_client, canary) -> None:
    """One embed split into three requests, the second failing: its error comes alone, with no group or body."""
    server.script(server.Scripted(), server.Scripted(status=400), server.Scripted())
    async with open_client(dimensions=8, max_inputs_per_request=1, max_retries=0, max_concurrency=1) as client:
        with pytest.raises(ProviderError) as caught:
            await client.embed(["a", f"b {canary}", "c"], EmbeddingInputKind.DOCUMENT)
    assert caught.value.status == 400
    assert caught.value.__context__ is None
    assert_content_free(caught.value, canary, server.api_key)


async def test_an_unreachable_server_keeps_nothing_chained(open_client, canary) -> None:
    """A refused connection: ProviderUnavailableError, and the connection error (with the URL) is released."""
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    async with open_client(dimensions=8, base_url=url, max_retries=0) as client:
        with pytest.raises(ProviderUnavailableError) as caught:
            await client.embed([canary], EmbeddingInputKind.QUERY)
    assert caught.value.__context__ is None
    assert_content_free(caught.value, canary, url)


async def test_a_401_body_echoing_the_key_is_not_copied(server, open_client, monkeypatch, api_key_env, caplog) -> None:
    """The 401 body quotes the presented key; the error text and logs do not."""
    caplog.set_level(logging.DEBUG)
    wrong_key = "sk-wrong-KEYCANARY-0c55aa"
    monkeypatch.setenv(api_key_env, wrong_key)
    async with open_client(dimensions=8) as client:
        with pytest.raises(ProviderError) as caught:
            await client.embed(["a"], EmbeddingInputKind.DOCUMENT)
    assert caught.value.status == 401
    assert wrong_key not in _rendered(caught.value)
    assert wrong_key not in caplog.text
    assert_content_free(caught.value, wrong_key)


async def test_options_and_clients_never_show_the_key(server, open_client, api_key_env) -> None:
    """Options hold the variable's name only; the client's repr shows no key."""
    options = OpenAiEmbeddingOptions(api_key_env=api_key_env)
    assert server.api_key not in repr(options) + str(options.model_dump())
    async with open_client() as client:
        assert server.api_key not in repr(client)


async def test_missing_key_error_names_the_source_not_a_value(monkeypatch) -> None:
    """The message says which variable to set and nothing else from the environment."""
    monkeypatch.setenv("RUNIQ_TEST_EMPTY_KEY", "   ")
    with pytest.raises(RagConfigurationError) as caught:
        async with open_openai_embedding(OpenAiEmbeddingOptions(api_key_env="RUNIQ_TEST_EMPTY_KEY")):
            pass
    assert "RUNIQ_TEST_EMPTY_KEY" in str(caught.value)
