"""Shared ingestion runs in the core: buckets, outcomes, options, and the worker against an in-memory
WorkClaims fake (the PostgreSQL plugin's tests run the same paths across processes)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import structlog

from runiq.hosting import Host
from runiq.rag import RagConfigurationError, RagDocument, RagIngestionManager, RagIngestionState
from runiq.rag._ingestion.buckets import BucketFilter, SeenDigests, bucket_of
from runiq.rag._ingestion.operation import RagIngestionFailure, RagIngestionProgress, RunOutcome
from runiq.rag._ingestion.strategies import IngestionBuilder, SharedRunOptions
from runiq.rag._registration.config import add_indexes_from_settings
from runiq.rag._stores.claims import PartResult, SharedRun, WorkClaims
from runiq.rag.providers import InMemoryVectorStore
from runiq.rag.testing import SlowEmbedder
from runiq.settings import RuniqSettings

# -- buckets and outcomes --------------------------------------------------------------------------


def test_buckets_partition_the_ids_and_the_seen_digests_find_the_unseen() -> None:
    ids = [f"folder/doc-{i}.md" for i in range(1000)]
    filters = [BucketFilter(b, 7) for b in range(7)]
    admitted = [[document_id for document_id in ids if f(document_id)] for f in filters]
    assert sorted(d for bucket in admitted for d in bucket) == sorted(ids)  # every id in exactly one bucket
    assert all(60 < len(bucket) < 220 for bucket in admitted)  # and the buckets are roughly even
    assert all(bucket_of(document_id, 7) == b for b, bucket in enumerate(admitted) for document_id in bucket)
    seen = SeenDigests(f.digests() for f in filters[:6])  # bucket 6's pass never recorded
    assert seen.unseen([*ids, "gone.md"]) == [*admitted[6], "gone.md"]
    assert len(SeenDigests([])) == 0


def test_outcomes_combine_counters_and_failures() -> None:
    early = RagIngestionFailure(code="undecodable", timestamp=datetime(2024, 1, 1, tzinfo=UTC), document_id="a")
    late = replace(early, document_id="b", timestamp=early.timestamp + timedelta(seconds=1))
    first = RunOutcome(progress=RagIngestionProgress(processed_documents=3, failed_documents=1), failures=(late,))
    second = RunOutcome(progress=RagIngestionProgress(processed_documents=2, added_documents=2), failures=(early,))
    total = RunOutcome.combined([first, second])
    assert total.progress == RagIngestionProgress(processed_documents=5, failed_documents=1, added_documents=2)
    assert total.failures == (late, early)
    assert total.last_failure is None  # only explicit last failures count
    assert total.state is RagIngestionState.PARTIALLY_COMPLETED
    assert RunOutcome.from_record(total.record()) == total
    assert RunOutcome(progress=RagIngestionProgress(processed_documents=1, failed_documents=1)).state is (
        RagIngestionState.FAILED
    )
    assert RunOutcome().state is RagIngestionState.COMPLETED


# -- options ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [{"buckets": 0}, {"buckets": 5000}, {"buckets": True}, {"lease_seconds": 0.5}, {"deployment": ""}],
)
def test_shared_run_options_are_validated(options: dict[str, Any]) -> None:
    with pytest.raises(RagConfigurationError):
        SharedRunOptions(**options)


def test_shared_runs_go_beside_any_strategy_once() -> None:
    builder = IngestionBuilder().on_startup().shared_runs(buckets=8, deployment="v1")
    strategy = builder.build()
    assert (strategy.kind.value, strategy.shared) == ("on_startup", SharedRunOptions(buckets=8, deployment="v1"))
    with pytest.raises(RagConfigurationError):
        builder.shared_runs()
    assert IngestionBuilder().shared_runs().build().shared == SharedRunOptions()  # manual runs too


def test_settings_bind_to_the_same_options(make_host: Callable[..., Host], tmp_path: Path) -> None:
    shared = {"buckets": 4, "lease_seconds": 10}
    docs = {
        "sources": [{"path": str(tmp_path)}],
        "default_mode": "lexical",
        "ingestion": {"strategy": "background_on_startup", "shared": shared},
    }
    settings = RuniqSettings(rag={"indexes": {"docs": docs}})
    host = make_host(lambda rag: add_indexes_from_settings(rag, settings))
    from runiq.rag._runtime import IndexRuntime

    definition = host.services.get(IndexRuntime).registry.get("docs")
    assert definition.ingestion.shared == SharedRunOptions(buckets=4, lease_seconds=10.0)


# -- the worker against an in-memory fake ------------------------------------------------------------


@dataclass
class _Part:
    state: str = "pending"
    holder: str | None = None
    expires: float = 0.0
    record: Mapping[str, Any] | None = None
    seen: bytes = b""


class ClaimingStore(InMemoryVectorStore):
    """The in-memory store plus an in-process WorkClaims (one event loop stands for many workers)."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: dict[str, SharedRun] = {}
        self.parts: dict[str, dict[int, _Part]] = {}
        self.lose_renewals = 0  # the next renewals answer "lost"
        self.claims: list[int] = []

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    async def join_run(
        self, index_name: str, *, operation_id: str, reason: str, parts: int, key: str | None = None
    ) -> SharedRun:
        for run in self.runs.values():
            if run.index_name == index_name and run.state == "running":
                return run
        run = SharedRun(
            index_name=index_name,
            operation_id=operation_id,
            reason=reason,
            parts=parts,
            state="running",
            started_at=datetime.now(UTC),
        )
        self.runs[operation_id] = run
        self.parts[operation_id] = {part: _Part() for part in range(parts + 1)}
        return run

    async def refresh_run(self, run: SharedRun) -> SharedRun:
        return self.runs[run.operation_id]

    async def claim_part(self, run: SharedRun, *, holder: str, lease_seconds: float) -> int | None:
        if self.runs[run.operation_id].state != "running":
            return None
        parts = self.parts[run.operation_id]
        buckets_done = all(parts[p].state == "done" for p in range(run.parts))
        for number, part in parts.items():
            free = part.state == "pending" or (part.state == "held" and part.expires < self._now())
            if free and (number < run.parts or buckets_done):
                part.state, part.holder, part.expires = "held", holder, self._now() + lease_seconds
                self.claims.append(number)
                return number
        return None

    def _held(self, run: SharedRun, part: int, holder: str) -> _Part | None:
        found = self.parts[run.operation_id][part]
        running = self.runs[run.operation_id].state == "running"
        return found if running and found.state == "held" and found.holder == holder else None

    async def renew_part(self, run: SharedRun, part: int, *, holder: str, lease_seconds: float) -> bool:
        found = self._held(run, part, holder)
        if found is not None and self.lose_renewals > 0:
            self.lose_renewals -= 1
            found.state = "pending"  # as if another worker had taken it over
            return False
        if found is not None:
            found.expires = self._now() + lease_seconds
        return found is not None

    async def release_part(self, run: SharedRun, part: int, *, holder: str) -> None:
        if (found := self._held(run, part, holder)) is not None:
            found.state, found.holder = "pending", None

    async def complete_part(
        self, run: SharedRun, part: int, *, holder: str, record: Mapping[str, Any], seen: bytes
    ) -> bool:
        if (found := self._held(run, part, holder)) is None:
            return False
        found.state, found.record, found.seen = "done", record, seen
        return True

    async def part_results(self, run: SharedRun) -> Sequence[PartResult]:
        parts = self.parts[run.operation_id]
        return [
            PartResult(part=n, record=p.record or {}, seen=p.seen)
            for n, p in parts.items()
            if n < run.parts and p.state == "done"
        ]

    async def end_run(self, run: SharedRun, *, state: str, record: Mapping[str, Any]) -> bool:
        current = self.runs[run.operation_id]
        if current.state != "running":
            return False
        self.runs[run.operation_id] = replace(current, state=state, result=record, completed_at=datetime.now(UTC))
        return True


def _documents(count: int) -> list[RagDocument]:
    return [RagDocument(document_id=f"doc-{i}", content=f"Document {i} about item {i * 3}.") for i in range(count)]


def _shared_host(
    index_host: Callable[..., Host], store: InMemoryVectorStore, documents: list[RagDocument], delay: float = 0.0
) -> Host:
    return index_host(
        lambda index: (
            index.use_documents(documents)
            .use_embedding("slow")
            .use_vector_store("claiming")
            .configure_embedding_batching(batch_size=2, concurrency=1)
            .configure_ingestion(lambda ingestion: ingestion.shared_runs(buckets=3, lease_seconds=1))
        ),
        embeddings={"slow": SlowEmbedder(delay=delay, dimensions=16)},
        stores={"claiming": store},
    )


async def test_two_hosts_share_one_run_through_the_claims(index_host: Callable[..., Host]) -> None:
    store = ClaimingStore()
    assert isinstance(store, WorkClaims)
    documents = _documents(30)
    async with _shared_host(index_host, store, documents) as a, _shared_host(index_host, store, documents) as b:
        operations = await asyncio.gather(*(h.services.get(RagIngestionManager).run("docs") for h in (a, b)))
    assert len(store.runs) == 1
    assert {op.operation_id for op in operations} == set(store.runs)
    assert {op.state for op in operations} == {RagIngestionState.COMPLETED}
    assert {op.progress.added_documents for op in operations} == {30}
    assert sorted(store.claims) == [0, 1, 2, 3]  # each bucket once, then the finish
    assert set((await store.document_hashes("docs")).keys()) == {d.document_id for d in documents}


async def test_a_lost_claim_stops_the_pass_and_the_bucket_is_done_again(index_host: Callable[..., Host]) -> None:
    """A worker whose lease renewal says "lost" abandons its pass; the bucket is claimed and finished again."""
    store = ClaimingStore()
    store.lose_renewals = 1
    documents = _documents(12)
    async with _shared_host(index_host, store, documents, delay=0.15) as host:
        operation = await host.services.get(RagIngestionManager).run("docs")
    assert operation.state is RagIngestionState.COMPLETED
    assert len(store.claims) == 5  # three buckets, one of them twice, and the finish
    assert store.lose_renewals == 0
    assert set((await store.document_hashes("docs")).keys()) == {d.document_id for d in documents}
    assert operation.progress.processed_documents == 12  # the abandoned pass's counters are not counted


async def test_a_store_without_work_claims_runs_alone(index_host: Callable[..., Host]) -> None:
    documents = _documents(5)
    with structlog.testing.capture_logs() as logs:
        async with _shared_host(index_host, InMemoryVectorStore(), documents) as host:
            operation = await host.services.get(RagIngestionManager).run("docs")
    assert operation.state is RagIngestionState.COMPLETED
    assert operation.progress.added_documents == 5
    assert [e["event"] for e in logs if e["event"].startswith("ingestion.shared")] == [
        "ingestion.shared_runs_unsupported"
    ]


async def test_a_shared_run_skips_unchanged_files_by_stamp_in_every_bucket(
    index_host: Callable[..., Host], tmp_path: Path
) -> None:
    """Each bucket's pass reads only its changed files; unchanged ones count as seen, so the finisher
    deletes only the file that is gone."""
    old = time.time_ns() - 100 * 1_000_000_000
    for n in range(12):
        path = tmp_path / f"{n:02d}.txt"
        path.write_text(f"File {n} about item {n * 3}.")
        os.utime(path, ns=(old, old))
    store = ClaimingStore()
    host = index_host(
        lambda index: (
            index.use_directory(tmp_path, "*.txt")
            .use_embedding("slow")
            .use_vector_store("claiming")
            .configure_ingestion(lambda ingestion: ingestion.shared_runs(buckets=3, lease_seconds=1))
        ),
        embeddings={"slow": SlowEmbedder(delay=0.0, dimensions=16)},
        stores={"claiming": store},
    )
    async with host:
        manager = host.services.get(RagIngestionManager)
        assert (await manager.run("docs")).progress.added_documents == 12
        assert len(await store.document_stamps("docs", [f"{n:02d}.txt" for n in range(12)])) == 12
        (tmp_path / "05.txt").unlink()
        second = await manager.run("docs")
    p = second.progress
    assert second.state is RagIngestionState.COMPLETED
    assert (p.skipped_documents, p.added_documents, p.updated_documents, p.deleted_documents) == (11, 0, 0, 1)
    assert len(await store.document_hashes("docs")) == 11
