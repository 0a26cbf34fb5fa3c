"""Canary tests: planted content and query text never reaches logs, error text or tracebacks.

Document content, file names and provider error text are checked in the default configuration. Query
text is checked in error text and tracebacks always; in logs the design makes the query VISIBLE by
default (redacted, bounded), so there the tests assert it appears only in the event's ``query`` field,
and nowhere at all when visibility is HIDDEN or REDACTED.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from runiq.hosting import Host
from runiq.rag import (
    HashingEmbedding,
    RagConfigurationError,
    RagDocument,
    RagError,
    RagIngestionManager,
    RagIngestionState,
    RagObservabilityOptions,
    RagQuery,
    RagQueryVisibility,
    RagRetrievalMode,
    RagRetriever,
    RagValidationError,
    RetrievalError,
    StartupIngestionError,
)
from runiq.rag._documents import freeze_metadata
from runiq.rag.providers import InMemoryVectorStore, LexicalQuery, StoreHit
from runiq.rag.testing import CANARY, FailingEmbedder

MODES = list(RagRetrievalMode)


def _leaks(exc: BaseException) -> list[str]:
    """Every rendering of an exception a host might log or show."""
    return [str(exc), repr(exc), "".join(traceback.format_exception(exc))]


def _assert_clean_error(exc: BaseException) -> None:
    assert isinstance(exc, RagError)
    for text in _leaks(exc):
        assert CANARY not in text


def _without_query_field(logs: list[dict[str, Any]]) -> str:
    return repr([{k: v for k, v in entry.items() if k != "query"} for entry in logs])


class EchoingLexicalStore(InMemoryVectorStore):
    """Lexical search fails with the query in the exception text."""

    async def lexical_search(self, index_name: str, query: LexicalQuery, **kwargs: Any) -> list[StoreHit]:
        raise RuntimeError(f"lexical backend echoed: {query.text}")


def _documents(*extra: RagDocument) -> list[RagDocument]:
    return [
        RagDocument(document_id="hr", content=f"Policy POL-HR-014 covers remote work. {CANARY}"),
        RagDocument(document_id="code", content="Error CS1503 in filename.cs."),
        *extra,
    ]


def _rag(
    documents: Sequence[RagDocument],
    *,
    embedder: str | None = None,
    store: str | None = None,
    visibility: RagQueryVisibility | None = None,
    strategy: Callable[[Any], object] | None = None,
) -> Callable[[Any], object]:
    def configure(rag: Any) -> None:
        if visibility is not None:
            rag.configure_observability(RagObservabilityOptions(query_visibility=visibility))

        def index(builder: Any) -> None:
            builder.use_documents(documents)
            builder.use_embedding(embedder) if embedder else builder.use_embedding(HashingEmbedding(dimensions=32))
            builder.use_vector_store(store) if store else builder.use_in_memory_vector_store()
            if strategy is not None:
                builder.configure_ingestion(strategy)

        rag.add_index("docs", index)

    return configure


async def test_content_never_reaches_logs_on_the_happy_path(
    make_host: Callable[..., Host], caplog: pytest.LogCaptureFixture
) -> None:
    """Ingesting and retrieving a chunk that contains the canary logs none of it, while callers get the content."""
    with capture_logs() as logs:
        async with make_host(_rag(_documents())) as host:
            operation = await host.services.get(RagIngestionManager).run("docs")
            assert operation.state is RagIngestionState.COMPLETED
            retriever = host.services.get(RagRetriever)
            contents = []
            for mode in MODES:
                result = await retriever.retrieve(RagQuery(index_name="docs", text="POL-HR-014 remote", mode=mode))
                contents.extend(h.content for h in result.hits)
    assert any(CANARY in content for content in contents)  # the canary was really planted and retrieved
    assert logs  # events were emitted
    assert CANARY not in repr(logs)
    assert CANARY not in caplog.text


@pytest.mark.parametrize("fail_on", [None, CANARY], ids=["every-call", "canary-document"])
async def test_failing_embedder_during_ingestion_leaks_nothing(
    make_host: Callable[..., Host], caplog: pytest.LogCaptureFixture, fail_on: str | None
) -> None:
    """A provider error that echoes the canary content stays out of logs, operations and status."""
    with capture_logs() as logs:
        host = make_host(
            _rag(_documents(), embedder="failing"), embeddings={"failing": FailingEmbedder(32, fail_on=fail_on)}
        )
        async with host:
            manager = host.services.get(RagIngestionManager)
            operation = await manager.run("docs")
            assert operation.state in (RagIngestionState.FAILED, RagIngestionState.PARTIALLY_COMPLETED)
            status = manager.status("docs")
    for text in (repr(logs), repr(operation), repr(status), caplog.text):
        assert CANARY not in text
        assert "provider echoed input" not in text


@pytest.mark.parametrize("mode", [RagRetrievalMode.SEMANTIC, RagRetrievalMode.HYBRID])
async def test_failing_embedder_during_retrieval_leaks_nothing(
    make_host: Callable[..., Host], caplog: pytest.LogCaptureFixture, mode: RagRetrievalMode
) -> None:
    """A query embedding failure whose exception echoes the canary query gives a clean RetrievalError."""
    embedder = FailingEmbedder(32, fail_on=CANARY)
    documents = [RagDocument(document_id="code", content="Error CS1503 in filename.cs.")]
    with capture_logs() as logs:
        async with make_host(_rag(documents, embedder="failing"), embeddings={"failing": embedder}) as host:
            await host.services.get(RagIngestionManager).run("docs")
            with pytest.raises(RetrievalError) as raised:
                await host.services.get(RagRetriever).retrieve(
                    RagQuery(index_name="docs", text=f"CS1503 {CANARY}", mode=mode)
                )
    _assert_clean_error(raised.value)
    assert raised.value.cause_type == "RuntimeError"
    assert CANARY not in _without_query_field(logs)
    assert "provider echoed input" not in repr(logs) + caplog.text
    assert CANARY not in caplog.text


@pytest.mark.parametrize("mode", [RagRetrievalMode.LEXICAL, RagRetrievalMode.HYBRID])
async def test_failing_lexical_store_leaks_nothing(
    make_host: Callable[..., Host], caplog: pytest.LogCaptureFixture, mode: RagRetrievalMode
) -> None:
    """A lexical backend error that echoes the query gives a clean RetrievalError and clean logs."""
    with capture_logs() as logs:
        async with make_host(_rag(_documents(), store="echo"), stores={"echo": EchoingLexicalStore()}) as host:
            await host.services.get(RagIngestionManager).run("docs")
            with pytest.raises(RetrievalError) as raised:
                await host.services.get(RagRetriever).retrieve(
                    RagQuery(index_name="docs", text=f"remote {CANARY}", mode=mode)
                )
    _assert_clean_error(raised.value)
    assert CANARY not in _without_query_field(logs)
    assert "echoed" not in repr(logs) + caplog.text


@pytest.mark.parametrize("visibility", [RagQueryVisibility.HIDDEN, RagQueryVisibility.REDACTED])
@pytest.mark.parametrize("fails", [False, True], ids=["succeeds", "fails"])
async def test_hidden_or_redacted_queries_never_reach_logs(
    make_host: Callable[..., Host], visibility: RagQueryVisibility, fails: bool
) -> None:
    """With query visibility HIDDEN or REDACTED, a canary query appears in no log entry at all."""
    providers: dict[str, Any] = {"embeddings": {"failing": FailingEmbedder(32, fail_on=CANARY)}} if fails else {}
    with capture_logs() as logs:
        host = make_host(_rag(_documents(), embedder="failing" if fails else None, visibility=visibility), **providers)
        async with host:
            await host.services.get(RagIngestionManager).run("docs")  # with `fails`, the canary document fails
            for mode in MODES:
                try:
                    await host.services.get(RagRetriever).retrieve(
                        RagQuery(index_name="docs", text=f"remote {CANARY}", mode=mode)
                    )
                except RetrievalError as exc:
                    assert fails
                    _assert_clean_error(exc)
    assert CANARY not in repr(logs)


async def test_visible_query_is_confined_to_the_query_field(make_host: Callable[..., Host]) -> None:
    """By default (VISIBLE) the bounded query is the only place query text may appear in logs."""
    documents = [RagDocument(document_id="code", content="Error CS1503 in filename.cs.")]
    with capture_logs() as logs:
        async with make_host(_rag(documents)) as host:
            await host.services.get(RagIngestionManager).run("docs")
            await host.services.get(RagRetriever).retrieve(RagQuery(index_name="docs", text=f"CS1503 {CANARY}"))
    assert CANARY not in _without_query_field(logs)


async def test_startup_failure_error_is_clean(make_host: Callable[..., Host], caplog: pytest.LogCaptureFixture) -> None:
    """An OnStartup failure caused by a canary-echoing provider raises a clean StartupIngestionError."""
    host = make_host(
        _rag(_documents(), embedder="failing", strategy=lambda ingestion: ingestion.on_startup()),
        embeddings={"failing": FailingEmbedder(32)},
    )
    with capture_logs() as logs, pytest.raises(StartupIngestionError) as raised:
        await host.start()
    _assert_clean_error(raised.value)
    assert CANARY not in repr(logs) + caplog.text


async def test_background_failure_leaves_no_trace_in_any_log(
    make_host: Callable[..., Host], caplog: pytest.LogCaptureFixture
) -> None:
    """A failing background ingestion logs nothing of the canary (structlog or stdlib, e.g. asyncio)."""
    caplog.set_level(logging.DEBUG)
    host = make_host(
        _rag(_documents(), embedder="failing", strategy=lambda ingestion: ingestion.background_on_startup()),
        embeddings={"failing": FailingEmbedder(32)},
    )
    with capture_logs() as logs:
        async with host:
            operation = await asyncio.wait_for(host.services.get(RagIngestionManager).wait("docs"), 2)
            assert operation.state is RagIngestionState.FAILED
    assert CANARY not in repr(logs) + caplog.text


async def test_file_names_and_paths_stay_out_of_logs(
    make_host: Callable[..., Host], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A canary in a file name or directory path (good and undecodable files) never reaches logs."""
    root = tmp_path / f"dir-{CANARY}"
    root.mkdir()
    (root / f"{CANARY}.md").write_text("Readable policy text.")
    (root / f"bad-{CANARY}.md").write_bytes(b"\xff\xfe\x00bad \xc3\x28")

    def configure(rag: Any) -> None:
        rag.add_index(
            "docs",
            lambda index: (
                index.use_directory(root, "*.md")
                .use_embedding(HashingEmbedding(dimensions=32))
                .use_in_memory_vector_store()
            ),
        )

    with capture_logs() as logs:
        async with make_host(configure) as host:
            operation = await host.services.get(RagIngestionManager).run("docs")
            assert operation.state is RagIngestionState.PARTIALLY_COMPLETED
            await host.services.get(RagRetriever).retrieve(RagQuery(index_name="docs", text="policy"))
    assert CANARY not in repr(logs) + caplog.text


def test_validation_errors_do_not_echo_input() -> None:
    """Rejected queries, filters and metadata never copy the offending value into the error."""
    cases: list[Callable[[], object]] = [
        lambda: RagQuery(index_name="docs", text=CANARY * 1000),
        lambda: RagQuery(index_name="docs", text="x", filters={"team": [CANARY]}),
        lambda: freeze_metadata({"k": {CANARY: 1}}),
        lambda: RagQuery(index_name="docs", text=CANARY, top_k=0),
    ]
    for case in cases:
        with pytest.raises(RagValidationError) as raised:
            case()
        _assert_clean_error(raised.value)


def test_provider_option_errors_name_fields_not_values(make_host: Callable[..., Host]) -> None:
    """Invalid provider options are reported by field name; the (possibly secret) value is not echoed."""
    with pytest.raises(RagConfigurationError) as raised:
        make_host(
            lambda rag: rag.add_index(
                "docs",
                lambda index: (
                    index.use_documents([]).use_embedding("hashing", dimensions=CANARY).use_in_memory_vector_store()
                ),
            )
        )
    _assert_clean_error(raised.value)
    assert "dimensions" in str(raised.value)
