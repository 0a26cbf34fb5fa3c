"""The ingest progress bar: says what a run is doing before counters move, has a length and an ETA once
the total is known, and ends at 100% when every document was processed."""

from __future__ import annotations

import io
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from runiq.cli import main as cli_main
from runiq.cli.main import app
from runiq.cli.progress import IngestionBar, describe
from runiq.rag import (
    RagIngestionOperation,
    RagIngestionPhase,
    RagIngestionProgress,
    RagIngestionReason,
    RagIngestionState,
)

START = datetime(2026, 1, 1, tzinfo=UTC)


def _operation(phase: RagIngestionPhase, **counters: int) -> RagIngestionOperation:
    return RagIngestionOperation(
        operation_id="op",
        index_name="notes",
        reason=RagIngestionReason.MANUAL,
        state=RagIngestionState.RUNNING,
        started_at=START,
        progress=RagIngestionProgress(**counters),
        phase=phase,
    )


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _last_frame(out: io.StringIO) -> str:
    """What the terminal shows last: the text after the final line-clearing escape."""
    return out.getvalue().rsplit("\x1b[2K", 1)[-1]


def _terminal() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=220, color_system=None), out


def test_the_bar_names_the_opening_phase_then_counts_with_an_eta_and_ends_at_100_percent() -> None:
    console, out = _terminal()
    clock = _Clock()
    with IngestionBar(console, "notes", clock=clock) as bar:
        bar.show(_operation(RagIngestionPhase.OPENING))
        opening = out.getvalue()
        assert "opening store, loading model" in opening
        assert "0/?" in opening  # no total yet: no length, no ETA

        clock.now = 10.0
        bar.show(_operation(RagIngestionPhase.INGESTING, discovered_documents=40, expected_documents=300))
        clock.now = 15.0
        bar.show(
            _operation(
                RagIngestionPhase.INGESTING, discovered_documents=200, expected_documents=300, processed_documents=50
            )
        )
        clock.now = 20.0
        bar.show(
            _operation(
                RagIngestionPhase.INGESTING,
                discovered_documents=300,
                expected_documents=300,
                processed_documents=100,
                produced_chunks=250,
                embedded_chunks=260,
            )
        )
        running = out.getvalue()[len(opening) :]
        assert "ingesting" in running and "100/300" in running and "33%" in running
        assert "ETA 0:00:20" in running  # 50 documents in the last 5 s, 200 to go
        assert "chunks 250" in running and "embedded 260" in running

        clock.now = 40.0
        done = replace(
            _operation(RagIngestionPhase.FINISHED, discovered_documents=300, processed_documents=300),
            state=RagIngestionState.COMPLETED,
            completed_at=START + timedelta(seconds=40),
        )
        bar.show(done)
    final = _last_frame(out)
    assert "300/300" in final and "100%" in final and "finished" in final


def test_the_total_is_the_discovered_count_once_a_run_ends_early() -> None:
    """A cancelled run never learned its total: the bar ends at what was discovered, not at 100%."""
    console, out = _terminal()
    with IngestionBar(console, "notes", clock=_Clock()) as bar:
        cancelled = replace(
            _operation(RagIngestionPhase.FINISHED, discovered_documents=80, processed_documents=60),
            state=RagIngestionState.CANCELLED,
            completed_at=START + timedelta(seconds=5),
        )
        bar.show(cancelled)
    final = _last_frame(out)
    assert "60/80" in final and "75%" in final


def test_throughput_is_per_second_since_the_start() -> None:
    finished = replace(
        _operation(RagIngestionPhase.FINISHED, processed_documents=50, produced_chunks=200),
        state=RagIngestionState.COMPLETED,
        completed_at=START + timedelta(seconds=4),
    )
    rate = finished.throughput()
    assert (rate.seconds, rate.documents_per_second, rate.chunks_per_second) == (4.0, 12.5, 50.0)
    assert "12.5 docs/s, 50.0 chunks/s" in describe(finished)


def test_runiq_ingest_leaves_the_bar_complete_on_stderr(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_main.err, "width", 120)
    result = CliRunner().invoke(app, ["ingest", "-c", str(config)])
    assert "3/3" in result.stderr and "100%" in result.stderr
