"""The ``runiq ingest`` progress bar: phase, documents done of the total once known, ETA, throughput.

The bar follows an operation's snapshots (:meth:`IngestionBar.show`). While the store opens and the
model loads it says so instead of showing zeros; once the total is known (a source counted its
documents, or every source was read) it has a length and an estimated time left. A finished run
leaves it at its final counters: 100% when every discovered document was processed.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Self

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from runiq.cli.render import plain
from runiq.rag import RagIngestionOperation, RagIngestionPhase

__all__ = ["IngestionBar", "describe"]

_PHASES = {
    RagIngestionPhase.OPENING: "opening store, loading model",
    RagIngestionPhase.INGESTING: "ingesting",
    RagIngestionPhase.DELETING: "removing deleted documents",
    RagIngestionPhase.FINISHED: "finished",
}


def describe(operation: RagIngestionOperation) -> str:
    """The counters and throughput in one line: chunks written, chunks embedded, failures, rates."""
    p = operation.progress
    rate = operation.throughput()
    parts = [f"chunks {p.produced_chunks:,}"]
    if p.embedded_chunks:
        parts.append(f"embedded {p.embedded_chunks:,}")
    if p.failed_documents:
        parts.append(f"failed {p.failed_documents:,}")
    if p.processed_documents:
        parts.append(f"{rate.documents_per_second:,.1f} docs/s, {rate.chunks_per_second:,.1f} chunks/s")
    return "  ".join(parts)


class IngestionBar:
    """``with IngestionBar(console, index) as bar: bar.show(snapshot)`` until the run ends, then once more."""

    def __init__(self, console: Console, index_name: str, *, clock: Callable[[], float] | None = None) -> None:
        self._progress = Progress(
            TextColumn(f"[bold]{plain(index_name)}[/bold]"),
            TextColumn("{task.fields[phase]}"),
            BarColumn(bar_width=20),
            TaskProgressColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[detail]}"),  # last: a narrow terminal cuts it first
            console=console,
            get_time=clock,
        )
        self._task: TaskID | None = None

    def __enter__(self) -> Self:
        self._progress.start()
        self._task = self._progress.add_task("ingest", total=None, phase=_PHASES[RagIngestionPhase.OPENING], detail="")
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()

    def show(self, operation: RagIngestionOperation) -> None:
        assert self._task is not None
        p = operation.progress
        total = p.expected_documents or None
        if operation.state.is_terminal:
            total = p.discovered_documents  # known now, also when a run stopped before reading every source
        self._progress.update(
            self._task,
            total=total,
            completed=p.processed_documents,
            phase=_PHASES[operation.phase],
            detail=describe(operation),
            refresh=True,
        )
