"""runiq.sync: the synchronous entry point for scripts and notebooks, from plain code and from inside a
running event loop (a Jupyter cell runs inside one)."""

from __future__ import annotations

import asyncio
import faulthandler
import threading
from pathlib import Path

import pytest
import structlog

from runiq.hosting import Host, HostBuilder
from runiq.rag import (
    HashingEmbedding,
    IndexNotFoundError,
    RagDocument,
    RagIndexReadiness,
    RagIngestionState,
    RagQuery,
    RagRetrievalMode,
    StartupIngestionError,
    add_runiq_rag,
)
from runiq.sync import SyncHost, open_host

DOCUMENTS = [
    RagDocument(document_id="remote.md", content="Remote work policy POL-HR-014: three days a week."),
    RagDocument(document_id="build.md", content="Build error CS1503: argument type does not convert."),
]
QUERY = RagQuery(index_name="notes", text="CS1503", mode=RagRetrievalMode.LEXICAL)


def _builder(strategy: str = "manual") -> HostBuilder:
    builder = HostBuilder(load_entry_points=False)

    def configure(index):  # type: ignore[no-untyped-def]
        index.use_documents(DOCUMENTS).use_embedding(HashingEmbedding()).use_in_memory_vector_store()
        if strategy == "on_startup":
            index.configure_ingestion(lambda ingestion: ingestion.on_startup())

    add_runiq_rag(builder, lambda rag: rag.add_index("notes", configure))
    return builder


def _loop_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "runiq-sync-host"]


def test_plain_code_ingests_retrieves_and_closes() -> None:
    """From synchronous code: run, status, retrieve, then close stops the host and its thread."""
    with open_host(_builder()) as runiq:
        assert runiq.status("notes").readiness is RagIndexReadiness.NOT_INITIALIZED
        operation = runiq.run("notes")
        assert operation.state is RagIngestionState.COMPLETED
        assert operation.progress.added_documents == 2
        assert runiq.status("notes").readiness is RagIndexReadiness.READY
        assert runiq.retrieve(QUERY).hits[0].document_id == "build.md"
        host = runiq.host
    assert runiq.closed
    assert host.state.value == "stopped"
    assert _loop_threads() == []


async def test_inside_a_running_event_loop_it_neither_deadlocks_nor_complains() -> None:
    """A notebook cell runs inside an event loop: the sync API works there (no 'already running' error)."""
    asyncio.get_running_loop()  # this test body is on a running loop, like a Jupyter cell
    faulthandler.dump_traceback_later(120, exit=True)  # a deadlock ends the run with a traceback, never hangs
    try:
        runiq = open_host(_builder())
        try:
            assert runiq.run("notes").state is RagIngestionState.COMPLETED
            assert runiq.retrieve(QUERY).hits[0].document_id == "build.md"
        finally:
            runiq.close()
    finally:
        faulthandler.cancel_dump_traceback_later()
    await asyncio.sleep(0)  # the caller's loop is still usable afterwards


def test_on_startup_strategies_fire_when_the_host_opens() -> None:
    """Opening starts the host: an on_startup index is ingested before open_host returns."""
    with open_host(_builder("on_startup")) as runiq:
        assert runiq.status("notes").readiness is RagIndexReadiness.READY


def test_errors_of_the_async_api_propagate_unchanged() -> None:
    with open_host(_builder()) as runiq, pytest.raises(IndexNotFoundError):
        runiq.run("missing")


def test_a_failed_start_raises_and_leaves_no_thread(tmp_path: Path) -> None:
    """An on_startup ingestion that fails makes open_host raise; the loop thread has ended."""
    builder = HostBuilder(load_entry_points=False)
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "notes",
            lambda index: (
                index.use_directory(tmp_path / "absent")
                .use_embedding(HashingEmbedding())
                .use_in_memory_vector_store()
                .configure_ingestion(lambda ingestion: ingestion.on_startup())
            ),
        ),
    )
    with pytest.raises(StartupIngestionError):
        open_host(builder)
    assert _loop_threads() == []


def test_calls_after_close_and_from_the_loop_itself_are_refused() -> None:
    """A closed host refuses work; a call from the host's own loop would deadlock, so it is refused."""
    runiq = open_host(_builder())

    async def reenter(host: Host) -> None:
        runiq.status("notes")

    with pytest.raises(RuntimeError, match="own event loop"):
        runiq.call(reenter)
    runiq.close()
    runiq.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        runiq.status("notes")


def test_call_runs_any_async_api_on_the_host_loop() -> None:
    with open_host(_builder()) as runiq:
        caller = threading.current_thread()

        async def where(host: Host) -> threading.Thread:
            return threading.current_thread()

        assert runiq.call(where) is not caller


def test_opening_a_config_file_logs_to_stderr_not_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With structlog unconfigured (its default prints to stdout), open_host routes runiq's logs to stderr."""
    for name in ("RUNIQ_CONFIG", "RUNIQ_DISABLED_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("CS1503 in a build log", encoding="utf-8")
    config = tmp_path / "runiq.toml"
    config.write_text(
        '[logging]\nlevel = "info"\n'
        '[rag.indexes.notes]\n[[rag.indexes.notes.sources]]\npath = "docs"\n'
        '[rag.indexes.notes.embedding]\nprovider = "hashing"\n'
        '[rag.indexes.notes.vector_store]\nprovider = "in-memory"\n',
        encoding="utf-8",
    )
    structlog.reset_defaults()
    assert not structlog.is_configured()
    with open_host(config) as runiq:
        assert runiq.run("notes").state is RagIngestionState.COMPLETED
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "ingestion.finished" in captured.err


def test_an_application_logging_configuration_is_left_alone() -> None:
    """open_host configures structlog only when nobody has."""
    structlog.configure(processors=[structlog.processors.KeyValueRenderer()])
    before = structlog.get_config()
    with open_host(_builder()):
        pass
    assert structlog.get_config() == before


def test_sync_host_needs_a_host() -> None:
    """SyncHost wraps a built host; open_host is the documented way to get one."""
    runiq = SyncHost(_builder().build())
    runiq.close()
    assert runiq.closed
