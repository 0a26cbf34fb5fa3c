"""OpenAI-compatible servers without a key (Ollama, vLLM, TEI): no Authorization, dimensions declared or probed once.

The fake's ``/local/v1`` route plays the local server: it checks no key, serves its own models at their
own lengths, and refuses a ``dimensions`` parameter as vLLM does for a model without Matryoshka training.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import traceback

import numpy as np
import pytest
import structlog
from runiq.errors import ProviderError, ProviderResponseError
from runiq.hosting import HostBuilder
from runiq.rag import RagConfigurationError, RagDocument, RagIngestionManager, RagIngestionState, add_runiq_rag
from runiq.rag.providers import EmbeddingInputKind
from runiq.rag.testing.chains import assert_content_free
from runiq.secrets import EnvironmentSecretProvider
from runiq.sync import SyncHost

import runiq_openai.plugin
from runiq_openai import OpenAiEmbedding, OpenAiEmbeddingOptions
from runiq_openai.client import PROBE_TEXT
from runiq_openai.plugin import open_openai_embedding

DOC = EmbeddingInputKind.DOCUMENT
REAL_KEY = "sk-proj-REALKEYCANARY-93d0c1a7"


@pytest.fixture
def real_keys(monkeypatch: pytest.MonkeyPatch) -> str:
    """The environment of someone who also uses OpenAI: its key (and an admin key) are set."""
    monkeypatch.setenv("OPENAI_API_KEY", REAL_KEY)
    monkeypatch.setenv("OPENAI_ADMIN_KEY", REAL_KEY)
    return REAL_KEY


def _local(server, **options: object) -> OpenAiEmbeddingOptions:
    return OpenAiEmbeddingOptions(**({"model": "nomic-embed-text", "base_url": server.local_url} | options))


def _rendered(exc: BaseException) -> str:
    return "\n".join([str(exc), repr(exc), "".join(traceback.format_exception(exc))])


async def test_a_local_server_gets_no_authorization_even_with_a_key_in_the_environment(server, real_keys) -> None:
    """Neither the probe nor an embedding request carries an Authorization header, so the OpenAI key
    set for other tools never reaches another server."""
    options = _local(server)
    assert options.secret_source() is None
    async with open_openai_embedding(options) as client:
        result = await client.embed(["remote work policy", "expense receipts"], DOC)
    np.testing.assert_allclose(result, server.expected(["remote work policy", "expense receipts"], 768), atol=1e-6)
    assert len(server.requests) == 2  # the probe, then the embedding request
    assert all(r.local for r in server.requests)
    assert [r.authorization for r in server.requests] == [None, None]


async def test_a_key_goes_to_a_local_server_only_when_configured(server, api_key_env, real_keys) -> None:
    """``api_key_env`` (vLLM ``--api-key``, a gateway) sends that key, never OPENAI_API_KEY's."""
    async with open_openai_embedding(_local(server, api_key_env=api_key_env, dimensions=768)) as client:
        await client.embed(["a"], DOC)
    [request] = server.requests
    assert request.authorization == f"Bearer {server.api_key}"
    assert REAL_KEY not in request.authorization


@pytest.mark.parametrize("base_url", [None, "https://api.openai.com/v1", "https://API.OpenAI.com/v1/"])
async def test_openai_s_own_api_still_requires_a_key(monkeypatch, base_url) -> None:
    """No base_url, or api.openai.com: OPENAI_API_KEY by default, and its absence is a configuration error."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    options = OpenAiEmbeddingOptions(base_url=base_url)
    assert options.uses_openai_api
    assert options.secret_source() == EnvironmentSecretProvider("OPENAI_API_KEY")
    with pytest.raises(RagConfigurationError, match="environment variable 'OPENAI_API_KEY'"):
        async with open_openai_embedding(options):
            pass


async def test_undeclared_dimensions_are_probed_once_per_client(server) -> None:
    """One probe (runiq's own text, never content) when the client opens; then no more, however many
    concurrent calls follow."""
    async with open_openai_embedding(_local(server, max_inputs_per_request=1)) as client:
        assert client.dimensions == 768
        assert [r.inputs for r in server.probes] == [[PROBE_TEXT]]
        results = await asyncio.gather(*(client.embed([f"text {i}", f"more {i}"], DOC) for i in range(8)))
    assert {r.shape for r in results} == {(2, 768)}
    assert len(server.probes) == 1
    assert len(server.requests) == 1 + 16
    assert all(r.dimensions is None for r in server.requests)


async def test_declared_dimensions_skip_the_probe_and_are_not_sent(server) -> None:
    """``dimensions`` declares the length; the local server (which refuses the parameter) is asked nothing extra."""
    async with open_openai_embedding(_local(server, dimensions=768)) as client:
        assert client.dimensions == 768
        await client.embed(["a", "b"], DOC)
    assert server.probes == []
    [request] = server.requests
    assert request.dimensions is None


async def test_a_declared_length_the_server_does_not_return_is_a_clear_error(server, canary, caplog) -> None:
    """Declared 512, served 768: ProviderResponseError saying both numbers, nothing of the content."""
    caplog.set_level(logging.DEBUG)
    with structlog.testing.capture_logs() as events:
        async with open_openai_embedding(_local(server, dimensions=512)) as client:
            with pytest.raises(ProviderResponseError) as caught:
                await client.embed([f"confidential {canary}"], DOC)
    message = str(caught.value)
    assert "768 dimensions where 512 are expected" in message
    assert canary not in _rendered(caught.value) + caplog.text + repr(events)
    assert caught.value.__context__ is None
    assert_content_free(caught.value, canary)


async def test_send_dimensions_is_explicit(server, canary) -> None:
    """``send_dimensions=True`` sends the parameter (a Matryoshka model's server honours it; this one
    refuses it, as vLLM does otherwise): a ProviderError with the status, the echoed input not copied."""
    async with open_openai_embedding(_local(server, dimensions=256, send_dimensions=True, max_retries=0)) as client:
        with pytest.raises(ProviderError) as caught:
            await client.embed([f"confidential {canary}"], DOC)
    assert caught.value.status == 400
    assert server.requests[0].dimensions == 256
    assert_content_free(caught.value, canary)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'{"data": []}', "no usable vector"),
        (b'{"data": [{"index": 0, "embedding": "CANARY-7f3a9c-SECRET-CONTENT"}]}', "malformed"),
        (b"<html>CANARY-7f3a9c-SECRET-CONTENT</html>", "not JSON"),
        (b'{"data": [{"index": 0, "embedding": [0.5, NaN]}]}', "non-finite"),
        (b'{"data": [{"index": 0, "embedding": [0.5]}, {"index": 1, "embedding": [0.5]}]}', "count"),
    ],
    ids=["empty", "not-base64", "not-json", "not-finite", "two-vectors"],
)
async def test_a_failed_probe_fails_the_open_without_content(server, canary, body, reason) -> None:
    """A probe answer with no usable vector is a ProviderResponseError when the client opens."""
    server.script(server.Scripted(body=body))
    with pytest.raises(ProviderResponseError, match=reason) as caught:
        async with open_openai_embedding(_local(server)):
            pass
    assert caught.value.__context__ is None
    assert_content_free(caught.value, canary)


async def test_an_unknown_local_model_fails_the_probe_with_its_status(server, canary) -> None:
    """The server's 404 (its body echoing the probe text) becomes a ProviderError with status 404."""
    with pytest.raises(ProviderError) as caught:
        async with open_openai_embedding(_local(server, model="not-pulled", max_retries=0)):
            pass
    assert caught.value.status == 404
    assert PROBE_TEXT not in _rendered(caught.value)


def test_the_selection_shows_a_probed_model_and_validates_send_dimensions() -> None:
    """A model runiq does not know needs no dimensions; send_dimensions needs some, and never for ada-002."""
    selection = OpenAiEmbedding("nomic-embed-text", base_url="http://127.0.0.1:11434/v1")
    assert selection.display_name == "OpenAI nomic-embed-text (dimensions probed)"
    assert selection.options().declared_dimensions is None
    for invalid in (
        {"send_dimensions": True},
        {"model": "text-embedding-ada-002", "dimensions": 1536, "send_dimensions": True},
    ):
        with pytest.raises(RagConfigurationError, match="send_dimensions"):
            OpenAiEmbedding(**invalid)
    reduced = OpenAiEmbeddingOptions(model="text-embedding-3-small", dimensions=256)
    assert (reduced.request_dimensions, reduced.model_copy(update={"send_dimensions": False}).request_dimensions) == (
        256,
        None,
    )


def _shared_model_host(server, names: list[str]) -> HostBuilder:
    selection = OpenAiEmbedding("nomic-embed-text", base_url=server.local_url)
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_openai.plugin])
    documents = [RagDocument(document_id="a.md", content="remote work policy")]

    def configure(rag) -> None:
        for name in names:
            rag.add_index(
                name, lambda index: index.use_documents(documents).use_embedding(selection).use_in_memory_vector_store()
            )

    add_runiq_rag(builder, configure)
    return builder


async def test_concurrent_first_uses_share_one_probe(server, real_keys) -> None:
    """Four indexes on one model, ingested at once on a fresh host: one live client, one probe."""
    names = ["a", "b", "c", "d"]
    async with _shared_model_host(server, names).build() as host:
        manager = host.services.get(RagIngestionManager)
        operations = await asyncio.gather(*(manager.run(name) for name in names))
    assert {op.state for op in operations} == {RagIngestionState.COMPLETED}
    assert len(server.probes) == 1
    assert {r.authorization for r in server.requests} == {None}


def test_first_uses_from_several_threads_share_one_probe(server) -> None:
    """Through the synchronous facade, four threads each ingest an index first: still one probe."""
    names = ["a", "b", "c", "d"]
    runiq = SyncHost(_shared_model_host(server, names).build())
    states: list[RagIngestionState] = []
    try:
        threads = [threading.Thread(target=lambda n=name: states.append(runiq.run(n).state)) for name in names]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    finally:
        runiq.close()
    assert states == [RagIngestionState.COMPLETED] * 4
    assert len(server.probes) == 1


@pytest.mark.parametrize(
    "base_url",
    [
        "https://api.openai.com.attacker.example/v1",
        "https://attacker.example/api.openai.com/v1",
        "https://xapi.openai.com/v1",
        "https://openai.com/v1",
    ],
)
def test_a_host_that_only_looks_like_openai_s_gets_no_key(real_keys, base_url) -> None:
    """The rule compares the URL's host with api.openai.com exactly: not a prefix, suffix or path."""
    options = OpenAiEmbeddingOptions(model="nomic-embed-text", base_url=base_url)
    assert not options.uses_openai_api
    assert options.secret_source() is None


async def test_openai_base_url_from_the_environment_gets_no_openai_key(server, real_keys, monkeypatch) -> None:
    """No base_url, but OPENAI_BASE_URL (read by the openai client) names a local server: it is the
    server requests go to, so it gets no key either; OPENAI_API_KEY stays for api.openai.com."""
    monkeypatch.setenv("OPENAI_BASE_URL", server.local_url)
    options = OpenAiEmbeddingOptions(model="nomic-embed-text")
    assert not options.uses_openai_api
    assert options.secret_source() is None
    async with open_openai_embedding(options) as client:
        await client.embed(["a"], DOC)
    assert [(r.local, r.authorization) for r in server.requests] == [(True, None), (True, None)]
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.openai.com/v1")
    assert options.secret_source() == EnvironmentSecretProvider("OPENAI_API_KEY")
