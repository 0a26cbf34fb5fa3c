"""Run history, a run's failed documents, the store's health and counts, and 'updated' times that move."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from runiq.errors import VectorStoreUnavailableError
from runiq.hosting import Host
from runiq.rag import (
    RagIngestionFailure,
    RagIngestionManager,
    RagIngestionOperation,
    RagIngestionProgress,
    RagIngestionReason,
    RagIngestionState,
)
from runiq.rag._stores import StoreHealth
from runiq.rag.providers import InMemoryVectorStore, identity_hash
from runiq.rag.testing import CANARY
from runiq_dashboard import DashboardCredential, DashboardOptions, DashboardRole, create_dashboard_app, projection
from runiq_dashboard.progress_clock import MAX_TRACKED, ProgressClock
from runiq_dashboard.ratelimit import TokenBucket
from runiq_dashboard.store_overview import count_documents

BASE = "/runiq/api/rag/indexes"
FAILED_NAME = f"undecodable-{CANARY}.md"
READ_KEY = "read-key-0123456789abcdef"
OPERATE_KEY = "operate-key-0123456789abcdef"
QUERY_KEY = "query-key-0123456789abcdef"


def manager_of(host: Host) -> RagIngestionManager:
    return host.services.get(RagIngestionManager)


async def test_runs_are_listed_newest_first_with_their_counters(api: httpx.AsyncClient, host: Host) -> None:
    """Each finished run: state, times, duration, every counter, and what its failure list holds."""
    first = await manager_of(host).run("broken")
    second = await manager_of(host).run("broken")
    response = await api.get(f"{BASE}/broken/runs")
    assert response.status_code == 200
    runs = response.json()
    assert [r["operationId"] for r in runs] == [second.operation_id, first.operation_id]
    latest = runs[0]
    assert latest["state"] == "partially_completed"
    assert latest["reason"] == "manual"
    assert latest["completedAt"] is not None
    assert latest["updatedAt"] == latest["completedAt"]
    assert latest["durationMilliseconds"] >= 0
    assert latest["progress"]["discoveredDocuments"] == 2
    assert latest["progress"]["failedDocuments"] == 1
    assert latest["listedFailures"] == 1
    assert latest["lastFailureCode"] == "undecodable"
    assert (await api.get(f"{BASE}/broken/runs", params={"limit": 1})).json()[0]["operationId"] == second.operation_id
    assert (await api.get(f"{BASE}/nightly/runs")).json() == []


async def test_the_active_run_comes_first(api: httpx.AsyncClient, host: Host) -> None:
    """A running operation heads the history, before the finished ones."""
    finished = await manager_of(host).run("docs")
    running = await manager_of(host).start("docs")
    runs = (await api.get(f"{BASE}/docs/runs")).json()
    assert [(r["operationId"], r["state"]) for r in runs] == [
        (running.operation_id, "running"),
        (finished.operation_id, "completed"),
    ]
    await manager_of(host).wait("docs")


@pytest.mark.parametrize("limit", ["0", "101", "-1", "x", "1.5"])
async def test_the_runs_limit_is_validated(api: httpx.AsyncClient, limit: str) -> None:
    """1 to 100 finished runs; anything else is the fixed 422."""
    response = await api.get(f"{BASE}/docs/runs", params={"limit": limit})
    assert response.status_code == 422
    assert response.json()["code"] == "InvalidRequest"


async def test_a_store_that_cannot_give_its_history_is_503(
    api: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The history endpoints say the store could not be read, never why in its words."""

    async def unavailable(*_: object, **__: object) -> list[RagIngestionOperation]:
        raise VectorStoreUnavailableError(f"postgres said {CANARY}")

    monkeypatch.setattr(RagIngestionManager, "history", unavailable)
    for path in (f"{BASE}/docs/runs", f"{BASE}/docs/runs/some-id/failures"):
        response = await api.get(path)
        assert response.status_code == 503
        assert response.json()["code"] == "StoreUnavailable"
        assert CANARY not in response.text


async def test_a_run_lists_its_failed_documents_by_hashed_identity_and_code(api: httpx.AsyncClient, host: Host) -> None:
    """Without the query role the id (a file name here) stays on the server; its hash and code do not."""
    operation = await manager_of(host).run("broken")
    response = await api.get(f"{BASE}/broken/runs/{operation.operation_id}/failures")
    assert response.status_code == 200
    body = response.json()
    assert body["operationId"] == operation.operation_id
    assert body["state"] == "partially_completed"
    assert body["failedDocuments"] == 1
    assert body["truncated"] is False
    [failure] = body["failures"]
    assert failure["code"] == "undecodable"
    assert failure["documentIdentity"] == identity_hash(FAILED_NAME)
    assert failure["documentId"] is None
    assert failure["sourceType"] == "directory"
    assert CANARY not in response.text


async def test_the_query_role_sees_failed_document_ids(host: Host, client_for) -> None:  # type: ignore[no-untyped-def]
    """Who may read chunk text may read document ids: the file name is shown to the query role only."""
    options = DashboardOptions(
        credentials=(
            DashboardCredential(name="viewer", secret=READ_KEY, roles=frozenset({DashboardRole.READ})),
            DashboardCredential(name="operator", secret=OPERATE_KEY, roles=frozenset({DashboardRole.OPERATE})),
            DashboardCredential(name="searcher", secret=QUERY_KEY, roles=frozenset({DashboardRole.QUERY})),
        ),
        enable_query=True,
    )
    app = create_dashboard_app(host, options)
    operation = await manager_of(host).run("broken")
    path = f"{BASE}/broken/runs/{operation.operation_id}/failures"
    seen = {}
    for key in (READ_KEY, OPERATE_KEY, QUERY_KEY):
        seen[key] = (await client_for(app, headers={"X-API-Key": key}).get(path)).json()["failures"][0]["documentId"]
    assert seen == {READ_KEY: None, OPERATE_KEY: None, QUERY_KEY: FAILED_NAME}


async def test_an_active_runs_failures_are_listed_while_it_runs(api: httpx.AsyncClient, host: Host) -> None:
    """The run in progress is found too (its failures so far)."""
    running = await manager_of(host).start("slow")
    response = await api.get(f"{BASE}/slow/runs/{running.operation_id}/failures")
    assert response.status_code == 200
    assert response.json()["state"] in ("running", "completed")
    await manager_of(host).cancel("slow")


async def test_an_unknown_run_is_404(api: httpx.AsyncClient, host: Host) -> None:
    await manager_of(host).run("broken")
    response = await api.get(f"{BASE}/broken/runs/not-a-run/failures")
    assert response.status_code == 404
    assert response.json()["code"] == "RagRunNotFound"


def test_a_long_failure_list_says_it_is_truncated() -> None:
    """The exact count stays in failedDocuments; truncated says the list holds only the first ones."""
    now = datetime.now(UTC)
    failures = tuple(RagIngestionFailure(code="unreadable", timestamp=now, document_id=f"d{n}") for n in range(1000))
    operation = RagIngestionOperation(
        operation_id="op",
        index_name="big",
        reason=RagIngestionReason.MANUAL,
        state=RagIngestionState.PARTIALLY_COMPLETED,
        started_at=now,
        completed_at=now,
        progress=RagIngestionProgress(discovered_documents=5000, processed_documents=5000, failed_documents=1500),
        failures=failures,
    )
    listed = projection.failed_documents(operation, with_document_ids=False)
    assert (listed.failed_documents, listed.truncated, len(listed.failures)) == (1500, True, 1000)
    assert projection.run(operation).listed_failures == 1000


async def test_store_counts_documents_and_chunks(api: httpx.AsyncClient, host: Host) -> None:
    """Health, chunks and documents: empty before the first run, the stored counts after it."""
    before = (await api.get(f"{BASE}/docs/store")).json()
    assert before == {
        "healthy": True,
        "reason": None,
        "chunkCount": 0,
        "documentCount": 0,
        "documentCountExact": True,
    }
    await manager_of(host).run("docs")
    after = (await api.get(f"{BASE}/docs/store")).json()
    assert (after["chunkCount"], after["documentCount"], after["documentCountExact"]) == (2, 2, True)


@pytest.mark.parametrize(
    ("reason", "shown"), [("schema_outdated", "schema_outdated"), (f"/srv/{CANARY} refused", "unhealthy")]
)
async def test_an_unhealthy_store_is_reported_by_code_and_not_counted(
    api: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch, reason: str, shown: str
) -> None:
    """The reason passes only as an identifier-like code; counts are unknown."""

    async def unhealthy(self: RagIngestionManager, index_name: str) -> StoreHealth:
        return StoreHealth(healthy=False, reason=reason)

    monkeypatch.setattr(RagIngestionManager, "health", unhealthy)
    body = (await api.get(f"{BASE}/docs/store")).json()
    assert body == {
        "healthy": False,
        "reason": shown,
        "chunkCount": None,
        "documentCount": None,
        "documentCountExact": False,
    }


async def test_counts_are_unknown_when_the_store_fails_to_count(
    api: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A healthy store whose count fails: 200 with null counts, never the store's text."""

    async def failing(*_: object, **__: object) -> int:
        raise VectorStoreUnavailableError(f"count failed: {CANARY}")

    monkeypatch.setattr(InMemoryVectorStore, "count", failing)
    response = await api.get(f"{BASE}/docs/store")
    assert response.json()["healthy"] is True
    assert response.json()["chunkCount"] is None
    assert CANARY not in response.text


class _PagedIds:
    def __init__(self, total: int) -> None:
        self.ids = [f"doc-{n:06d}" for n in range(total)]
        self.calls = 0

    async def document_id_page(self, index_name: str, *, after: str | None, limit: int) -> list[str]:
        self.calls += 1
        start = 0 if after is None else self.ids.index(after) + 1
        return self.ids[start : start + limit]


@pytest.mark.parametrize(
    ("total", "cap", "expected"),
    [
        (0, 10, (0, True)),
        (9, 10, (9, True)),
        (10, 10, (10, True)),
        (11, 10, (10, False)),
        (25_000, 20_000, (20_000, False)),
    ],
)
async def test_documents_are_counted_up_to_the_cap(total: int, cap: int, expected: tuple[int, bool]) -> None:
    """A store without document_count is paged: past the cap the count is not exact, and a big index
    costs a bounded number of pages."""
    store = _PagedIds(total)
    assert await count_documents(store, "i", cap=cap) == expected  # type: ignore[arg-type]
    assert store.calls <= cap // 10_000 + 2


class _CountedIds(_PagedIds):
    async def document_count(self, index_name: str) -> int:
        return len(self.ids)


async def test_a_store_that_counts_documents_is_asked_once_and_exact_past_the_cap() -> None:
    """A DocumentCounter answers in one read, so there is no cap and no paging."""
    store = _CountedIds(25_000)
    assert await count_documents(store, "i", cap=10_000) == (25_000, True)  # type: ignore[arg-type]
    assert store.calls == 0


async def test_updated_times_move_with_the_progress_of_a_run(api: httpx.AsyncClient, host: Host) -> None:
    """While the slow index runs (4 documents every ~0.5 s), updatedAt and lastUpdatedAt leave the start
    time and keep moving; they are never in the future."""
    await api.post(f"{BASE}/slow/ingestion/start")
    seen: set[str] = set()
    deadline = time.monotonic() + 20
    while len(seen) < 3 and time.monotonic() < deadline:
        status = (await api.get(f"{BASE}/slow/status")).json()
        operation = status["activeOperation"]
        if operation is None:
            break
        if operation["progress"]["processedDocuments"] > 0:
            assert operation["updatedAt"] > operation["startedAt"]
            assert status["lastUpdatedAt"] >= operation["updatedAt"]
            assert datetime.fromisoformat(operation["updatedAt"]) <= datetime.now(UTC) + timedelta(seconds=1)
            seen.add(operation["updatedAt"])
        listed = (await api.get(BASE)).json()[2]["activeOperation"]
        assert listed is None or listed["updatedAt"] >= operation["startedAt"]
        await asyncio.sleep(0.2)
    assert len(seen) >= 3, "updatedAt did not move with the counters"
    await api.post(f"{BASE}/slow/ingestion/cancel")


async def test_status_and_detail_are_seeded_from_the_store(
    api: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch, host: Host
) -> None:
    """Detail and status ask RagIngestionManager.inspect (history after a restart), and fall back to this
    process's status when the store cannot be read."""
    asked: list[str] = []
    real_status = RagIngestionManager.status

    async def inspect(self: RagIngestionManager, index_name: str) -> object:
        asked.append(index_name)
        if index_name == "nightly":
            raise VectorStoreUnavailableError(f"down: {CANARY}")
        return real_status(self, index_name)

    monkeypatch.setattr(RagIngestionManager, "inspect", inspect)
    assert (await api.get(f"{BASE}/docs/status")).status_code == 200
    assert (await api.get(f"{BASE}/docs")).status_code == 200
    fallback = await api.get(f"{BASE}/nightly/status")
    assert fallback.status_code == 200
    assert fallback.json()["readiness"] == "not_initialized"
    assert asked == ["docs", "docs", "nightly"]


def _running(progress: RagIngestionProgress, started: datetime) -> RagIngestionOperation:
    return RagIngestionOperation(
        operation_id="op-1",
        index_name="i",
        reason=RagIngestionReason.MANUAL,
        state=RagIngestionState.RUNNING,
        started_at=started,
        progress=progress,
    )


def test_progress_clock_moves_only_when_counters_change() -> None:
    started = datetime(2026, 1, 1, tzinfo=UTC)
    now = [started + timedelta(seconds=5)]
    clock = ProgressClock(now=lambda: now[0])
    assert clock.updated_at(_running(RagIngestionProgress(), started)) == started
    moved = RagIngestionProgress(discovered_documents=3, processed_documents=1)
    assert clock.updated_at(_running(moved, started)) == now[0]
    first_move = now[0]
    now[0] += timedelta(seconds=7)
    assert clock.updated_at(_running(moved, started)) == first_move  # same counters: same time
    more = RagIngestionProgress(discovered_documents=3, processed_documents=2)
    assert clock.updated_at(_running(more, started)) == now[0]
    done = started + timedelta(seconds=30)
    finished = RagIngestionOperation(
        operation_id="op-1",
        index_name="i",
        reason=RagIngestionReason.MANUAL,
        state=RagIngestionState.COMPLETED,
        started_at=started,
        completed_at=done,
        progress=more,
    )
    assert clock.updated_at(finished) == done


def test_progress_clock_keeps_a_bounded_number_of_operations() -> None:
    started = datetime(2026, 1, 1, tzinfo=UTC)
    clock = ProgressClock(now=lambda: started)
    operation = _running(RagIngestionProgress(processed_documents=1), started)
    for n in range(MAX_TRACKED + 50):
        clock.updated_at(replace(operation, operation_id=f"op-{n}"))
    assert len(clock) == MAX_TRACKED


def test_token_bucket_refills_at_its_rate() -> None:
    """60 per minute: 60 at once, then one a second; the refusal says how long to wait."""
    now = [100.0]
    bucket = TokenBucket(60, clock=lambda: now[0])
    assert [bucket.acquire() for _ in range(60)] == [None] * 60
    assert bucket.acquire() == 1
    now[0] += 0.5
    assert bucket.acquire() == 1
    now[0] += 0.5
    assert bucket.acquire() is None
    now[0] += 3600
    assert [bucket.acquire() for _ in range(61)].count(None) == 60  # never more than the capacity
    slow = TokenBucket(1, period=60, clock=lambda: now[0])
    assert slow.acquire() is None
    assert slow.acquire() == 60
