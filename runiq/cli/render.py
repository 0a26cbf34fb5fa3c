"""Rich renderings of the CLI's output documents. Content is shown because the operator asked for it on
their terminal; every value from a document or a server is printed as plain text (never as Rich markup)
with control characters escaped, so a file name or chunk cannot restyle or drive the terminal."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from runiq.cli.output import HitOutput, IngestOutput, OperationOutput, QueryOutput, StatusOutput

__all__ = ["hits_table", "ingest_report", "plain", "status_table"]


def plain(value: object) -> str:
    """``value`` as one printable line: control and other non-printable characters become escapes."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def _fmt(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _semantic(hit: HitOutput) -> str:
    semantic = hit.provenance.semantic
    if hit.raw_score is None or semantic is None:
        return "-"
    direction = "↑" if hit.higher_is_better else "↓"
    return f"#{semantic.rank} {_fmt(hit.raw_score)} {plain(hit.metric)}{direction} rel {_fmt(hit.relevance)}"


def hits_table(result: QueryOutput) -> Table:
    """One row per hit: the semantic score with its metric and direction, the lexical rank, the RRF value."""
    mode = result.mode.value if result.mode else "default mode"
    table = Table(title=Text(f"{plain(result.index_name)} · {mode} · {len(result.hits)} hits"), show_lines=True)
    table.add_column("#", no_wrap=True)
    table.add_column("chunk / text", overflow="fold", ratio=3)
    table.add_column("semantic (rank raw metric relevance)", overflow="fold", ratio=2)
    table.add_column("lexical (rank bm25)", no_wrap=True)
    table.add_column("rrf", no_wrap=True)
    for hit in result.hits:
        lexical = hit.provenance.lexical
        lexical_cell = f"#{lexical.rank} {_fmt(lexical.raw_score)}" if lexical else "-"
        chunk = Text(plain(hit.chunk_id))
        chunk.append("\n" + plain(" ".join(hit.content.split())[:90]), style="dim")
        table.add_row(str(hit.rank), chunk, Text(_semantic(hit)), lexical_cell, _fmt(hit.provenance.fused_score, 5))
    return table


def _summary(op: OperationOutput) -> Text:
    p = op.progress
    failure = f", last failure: {plain(op.last_failure.code)}" if op.last_failure else ""
    return Text(
        f"{plain(op.index_name)}: {op.state.value} in {op.duration_seconds or 0:.2f}s — "
        f"discovered {p.discovered_documents}, added {p.added_documents}, updated {p.updated_documents}, "
        f"skipped {p.skipped_documents}, deleted {p.deleted_documents}, failed {p.failed_documents}, "
        f"chunks {p.produced_chunks}, files skipped (no loader) {p.skipped_files}{failure}"
    )


def _failures(op: OperationOutput) -> list[Text]:
    lines = [
        Text(f"  failed: {plain(f.document_id or '(no document)')}  [{plain(f.code)}]", style="red")
        for f in op.failures
    ]
    if op.failures_truncated:
        more = op.progress.failed_documents - len(op.failures)
        lines.append(Text(f"  ... and {more} more failed documents (only the first {len(op.failures)} are listed)"))
    return lines


def ingest_report(report: IngestOutput) -> Group:
    """Per run: the counters, then each failed document with its code."""
    return Group(*(line for op in report.operations for line in (_summary(op), *_failures(op))))


def status_table(report: StatusOutput) -> Table:
    table = Table(title="RAG indexes")
    for column in ("index", "strategy", "sources", "embedding", "store", "metric", "default mode", "readiness"):
        table.add_column(column, overflow="fold")
    for index in report.indexes:
        strategy = index.strategy.value + (f" ({index.schedule})" if index.schedule else "")
        cells = (
            index.name,
            strategy,
            ", ".join(index.sources),
            index.embedding or "-",
            index.vector_store,
            index.metric.value,
            index.default_mode.value,
            index.readiness.value,
        )
        table.add_row(*(Text(plain(cell)) for cell in cells))
    return table
