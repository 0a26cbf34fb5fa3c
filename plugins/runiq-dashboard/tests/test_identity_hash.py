"""One identity hash everywhere: a failed document carries the same hash in the ingestion log line, the
ingestion event and the dashboard's DTOs, so an operator who knows its id finds it in all three."""

from __future__ import annotations

import httpx
from structlog.testing import capture_logs

from runiq.hosting import HostBuilder
from runiq.rag import (
    HashingEmbedding,
    IngestionEvent,
    RagDocument,
    RagIngestionManager,
    RetrievalEvent,
    add_runiq_rag,
)
from runiq.rag.providers import identity_hash
from runiq.rag.testing import CANARY
from runiq_dashboard import create_dashboard_app

BASE = "/runiq/api/rag/indexes"
FAILED_ID = f"reports/salaries-{CANARY}.md"


class EventList:
    def __init__(self) -> None:
        self.events: list[RetrievalEvent | IngestionEvent] = []

    def emit(self, event: RetrievalEvent | IngestionEvent) -> None:
        self.events.append(event)


async def test_a_failed_document_has_one_hash_in_logs_events_and_dashboard_dtos(
    client_for,  # type: ignore[no-untyped-def]
) -> None:
    """A lone surrogate fails the document as ``invalid_text``; each surface names it by the same hash."""
    sink = EventList()
    builder = HostBuilder(load_entry_points=False)
    documents = [
        RagDocument(document_id="good.md", content="Fine text."),
        RagDocument(document_id=FAILED_ID, content=f"Broken \udc80 text about {CANARY}."),
    ]
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: (
                index.use_documents(documents)
                .use_embedding(HashingEmbedding(dimensions=16))
                .use_in_memory_vector_store()
            ),
        ).add_observability_sink(sink),
    )
    expected = identity_hash(FAILED_ID)
    async with builder.build() as host:
        with capture_logs() as logs:
            operation = await host.services.get(RagIngestionManager).run("docs")
        api: httpx.AsyncClient = client_for(create_dashboard_app(host))
        status = (await api.get(f"{BASE}/docs/status")).json()
        failures = (await api.get(f"{BASE}/docs/runs/{operation.operation_id}/failures")).json()

    [logged] = [entry for entry in logs if entry["event"] == "ingestion.document_failed"]
    [event] = [event for event in sink.events if isinstance(event, IngestionEvent)]
    [finished_line] = [entry for entry in logs if entry["event"] == "ingestion.finished"]
    [listed] = failures["failures"]
    assert logged["document"] == expected
    assert event.failed_document == expected
    assert finished_line["failed_document"] == expected
    assert status["lastFailure"]["documentIdentity"] == expected
    assert listed["documentIdentity"] == expected
    assert (logged["code"], event.failure_code, listed["code"]) == ("invalid_text",) * 3
    assert all(CANARY not in str(entry) for entry in logs)
