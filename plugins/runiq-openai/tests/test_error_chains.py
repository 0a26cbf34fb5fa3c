"""End to end through a host: every error the public API raises while the OpenAI server fails keeps
nothing of the provider's exception, its echoing body or its request (with the API key) anywhere:
``__cause__``, ``__context__``, ``args``, attributes or the formatted traceback.

Canaries sit in the query, the chunk content, metadata, a file name (also a document id and the
``title`` metadata of a directory source) and the credentials; the fake server echoes the inputs and
the Authorization header in every error body.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from runiq.hosting import Host, HostBuilder
from runiq.rag import (
    RagDocument,
    RagIngestionManager,
    RagIngestionState,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    RetrievalError,
    RetrievalErrorCode,
    StartupIngestionError,
    add_runiq_rag,
)
from runiq.rag.testing import CANARY
from runiq.rag.testing.chains import assert_content_free

import runiq_openai.plugin
from runiq_openai import OpenAiEmbedding, OpenAiEmbeddingModels

QUERY_CANARY = "QUERYCANARY-51c2e9"
FILE_CANARY = "FILECANARY-3e77a1"
METADATA_CANARY = "METACANARY-9d04b2"

FAILURES: dict[str, dict[str, Any]] = {
    "400": {"status": 400},
    "401": {"status": 401},  # the body quotes the key that was presented
    "429": {"status": 429, "headers": {"retry-after-ms": "1"}},
    "500": {"status": 500},
    "timeout": {"delay": 0.6},
    "not-json": {"body": f"<html>{CANARY} {QUERY_CANARY}</html>".encode()},
}


def _host(
    server: Any, api_key_env: str, root: Path, configure_ingestion: Callable[[Any], object] | None = None
) -> Host:
    (root / f"{FILE_CANARY}.md").write_text(f"# Remote work\n\nStaff may work remotely. {CANARY}\n")
    notes = [
        RagDocument(
            document_id=f"hr/{FILE_CANARY}-notes",
            content=f"Remote work expenses are paid monthly. {CANARY}",
            metadata={"owner": METADATA_CANARY},
        )
    ]
    selection = OpenAiEmbedding(
        OpenAiEmbeddingModels.TEXT_EMBEDDING_3_SMALL,
        dimensions=16,
        base_url=server.url,
        api_key_env=api_key_env,
        timeout=0.2,
        max_retries=1,
    )

    def index(source: Callable[[Any], Any]) -> Callable[[Any], object]:
        def build(builder: Any) -> None:
            source(builder).use_embedding(selection).use_in_memory_vector_store()
            if configure_ingestion is not None:
                builder.configure_ingestion(configure_ingestion)

        return build

    builder = HostBuilder(load_entry_points=False, plugins=[runiq_openai.plugin])
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index("files", index(lambda b: b.use_directory(root, "*.md"))).add_index(
            "notes", index(lambda b: b.use_documents(notes))
        ),
    )
    return builder.build()


def _secrets(server: Any, root: Path) -> tuple[str, ...]:
    return (QUERY_CANARY, CANARY, FILE_CANARY, METADATA_CANARY, server.api_key, str(root))


@pytest.mark.parametrize("name", list(FAILURES))
async def test_failed_retrievals_keep_nothing_of_the_provider(server, api_key_env, tmp_path, name) -> None:
    """Semantic and hybrid queries on both indexes while the server fails: each RetrievalError is alone."""
    async with _host(server, api_key_env, tmp_path) as host:
        manager = host.services.get(RagIngestionManager)
        for index_name in ("files", "notes"):
            await manager.run(index_name)
        server.script(*[server.Scripted(**FAILURES[name])] * 16)
        retriever = host.services.get(RagRetriever)
        errors = []
        for index_name in ("files", "notes"):
            for mode in (RagRetrievalMode.SEMANTIC, RagRetrievalMode.HYBRID):
                query = RagQuery(index_name=index_name, text=f"remote work {QUERY_CANARY}", mode=mode)
                with pytest.raises(RetrievalError) as caught:
                    await retriever.retrieve(query)
                errors.append(caught.value)
    assert any(QUERY_CANARY in str(r.inputs) for r in server.requests)  # the canary did reach the provider
    for error in errors:
        assert error.code is RetrievalErrorCode.EMBEDDING_FAILED
        assert_content_free(error, *_secrets(server, tmp_path))


async def test_failed_ingestion_keeps_nothing_of_the_provider(server, api_key_env, tmp_path) -> None:
    """Ingestion failing on every request: operations and status carry no content, metadata or key."""
    async with _host(server, api_key_env, tmp_path) as host:
        manager = host.services.get(RagIngestionManager)
        server.script(*[server.Scripted(status=400)] * 16)
        operations = [await manager.run(index_name) for index_name in ("files", "notes")]
        statuses = [manager.status(index_name) for index_name in ("files", "notes")]
    assert {operation.state for operation in operations} == {RagIngestionState.FAILED}
    rendered = repr(operations) + repr(statuses)  # document ids (file names) are in status by design
    for secret in (CANARY, METADATA_CANARY, server.api_key):
        assert secret not in rendered


async def test_a_failed_startup_with_a_rejected_key_keeps_nothing(server, api_key_env, tmp_path, monkeypatch) -> None:
    """OnStartup ingestion with a wrong key (the 401 body quotes it): StartupIngestionError, nothing chained."""
    wrong_key = "sk-wrong-KEYCANARY-77e0c1"
    monkeypatch.setenv(api_key_env, wrong_key)
    host = _host(server, api_key_env, tmp_path, lambda ingestion: ingestion.on_startup())
    with pytest.raises(StartupIngestionError) as caught:
        await host.start()
    assert any(r.authorization == f"Bearer {wrong_key}" for r in server.requests)
    assert_content_free(caught.value, wrong_key, *_secrets(server, tmp_path))
