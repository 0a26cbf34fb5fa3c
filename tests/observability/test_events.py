"""Retrieval and ingestion emit typed, content-free events to logs and sinks."""

from __future__ import annotations

import traceback

import pytest
import structlog

from runiq.errors import VectorIndexNotFoundError
from runiq.hosting import HostBuilder
from runiq.rag import (
    ContentPreviewOptions,
    HashingEmbedding,
    IngestionEvent,
    RagDocument,
    RagIngestionManager,
    RagObservabilityOptions,
    RagQuery,
    RagQueryVisibility,
    RagRetrievalMode,
    RagRetriever,
    RetrievalEvent,
    add_runiq_rag,
)
from runiq.rag._observability import ObservabilityRecorder
from runiq.rag.testing import CANARY


class _ListSink:
    def __init__(self) -> None:
        self.events: list[RetrievalEvent | IngestionEvent] = []

    def emit(self, event: RetrievalEvent | IngestionEvent) -> None:
        self.events.append(event)


class _BrokenSink:
    def emit(self, event: RetrievalEvent | IngestionEvent) -> None:
        raise RuntimeError(CANARY)


def _builder(options: RagObservabilityOptions, sink: _ListSink) -> HostBuilder:
    builder = HostBuilder(load_entry_points=False)
    documents = [
        RagDocument(document_id="/srv/secret-path/a.md", content=f"Remote work policy POL-HR-014 {CANARY}"),
        RagDocument(document_id="b.md", content="Expense receipts within 30 days."),
    ]
    add_runiq_rag(
        builder,
        lambda rag: (
            rag.configure_observability(options)
            .add_observability_sink(sink)
            .add_observability_sink(_BrokenSink())
            .add_index(
                "docs",
                lambda index: (
                    index.use_documents(documents)
                    .use_embedding(HashingEmbedding(dimensions=64))
                    .use_in_memory_vector_store()
                ),
            )
        ),
    )
    return builder


@pytest.mark.parametrize("mode", list(RagRetrievalMode))
async def test_default_events_carry_no_content_paths_or_canary(mode: RagRetrievalMode) -> None:
    """With defaults, logs and events have counts and modes, never content, ids-as-paths or the canary."""
    sink = _ListSink()
    with structlog.testing.capture_logs() as logs:
        async with _builder(RagObservabilityOptions(), sink).build() as host:
            await host.services.get(RagIngestionManager).run("docs")
            result = await host.services.get(RagRetriever).retrieve(
                RagQuery(index_name="docs", text="POL-HR-014 policy", mode=mode)
            )
            recorder = host.services.get(ObservabilityRecorder)
    assert result.hits
    text = repr(logs) + repr(sink.events)
    assert CANARY not in text
    assert "secret-path" not in text
    retrieval = [e for e in sink.events if isinstance(e, RetrievalEvent)]
    assert retrieval[-1].mode == mode.value and retrieval[-1].hit_count == len(result.hits)
    assert retrieval[-1].query == "POL-HR-014 policy"
    assert retrieval[-1].hits == ()
    assert recorder.last_retrieval["docs"] == retrieval[-1]
    assert isinstance(recorder.last_ingestion["docs"], IngestionEvent)
    assert any(entry["event"] == "observability.sink_failed" for entry in logs)


async def test_hidden_query_and_previews_opt_in() -> None:
    """HIDDEN omits the query; enabled previews are redacted, bounded and never show paths."""
    sink = _ListSink()
    options = RagObservabilityOptions(
        query_visibility=RagQueryVisibility.HIDDEN,
        content_preview=ContentPreviewOptions(enabled=True, maximum_characters=24, include_selected_results=True),
    )
    query_canary = f"query {CANARY}"
    with structlog.testing.capture_logs() as logs:
        async with _builder(options, sink).build() as host:
            await host.services.get(RagIngestionManager).run("docs")
            await host.services.get(RagRetriever).retrieve(
                RagQuery(index_name="docs", text=query_canary, mode=RagRetrievalMode.HYBRID)
            )
    event = [e for e in sink.events if isinstance(e, RetrievalEvent)][-1]
    assert event.query is None
    assert event.hits and all(h.preview is None or len(h.preview) <= 24 for h in event.hits)
    assert any(h.preview and h.preview.startswith("Remote work") for h in event.hits)
    assert "secret-path" not in repr(event) + repr(logs)
    assert CANARY not in repr(logs).replace(event.hits[0].preview or "", "")


async def test_failure_event_has_a_code_and_no_provider_text() -> None:
    """A failed retrieval emits retrieval.failed with a code; the traceback holds no query canary."""
    sink = _ListSink()
    async with _builder(RagObservabilityOptions(query_visibility=RagQueryVisibility.REDACTED), sink).build() as host:
        with pytest.raises(VectorIndexNotFoundError) as caught:
            # Never ingested: the store has no such index yet.
            await host.services.get(RagRetriever).retrieve(RagQuery(index_name="docs", text=f"x {CANARY}"))
    event = [e for e in sink.events if isinstance(e, RetrievalEvent)][-1]
    assert event.event == "retrieval.failed" and event.error_code
    assert event.query == "[REDACTED]"
    assert CANARY not in "".join(traceback.format_exception(caught.value))
