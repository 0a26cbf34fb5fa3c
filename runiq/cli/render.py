"""Rich tables for CLI output. Content is shown because the operator asked for it on their terminal."""

from __future__ import annotations

from rich.table import Table

from runiq.rag import IndexRegistry, RagIngestionManager, RagIngestionOperation, RagRetrievalResult

__all__ = ["hits_table", "operation_summary", "status_table"]


def _fmt(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def hits_table(result: RagRetrievalResult) -> Table:
    """One row per hit: the semantic score with its metric and direction, the lexical rank, the RRF value."""
    table = Table(title=f"{result.index_name} · {result.mode.value} · {len(result.hits)} hits", show_lines=True)
    table.add_column("#", no_wrap=True)
    table.add_column("chunk / text", overflow="fold", ratio=3)
    table.add_column("semantic (rank raw metric relevance)", overflow="fold", ratio=2)
    table.add_column("lexical (rank bm25)", no_wrap=True)
    table.add_column("rrf", no_wrap=True)
    for hit in result.hits:
        p = hit.provenance
        if hit.raw_score is not None and p.semantic is not None:
            direction = "↑" if hit.higher_is_better else "↓"
            semantic = f"#{p.semantic.rank} {_fmt(hit.raw_score)} {hit.metric}{direction} rel {_fmt(hit.relevance)}"
        else:
            semantic = "-"
        lexical = f"#{p.lexical.rank} {_fmt(p.lexical.raw_score)}" if p.lexical else "-"
        preview = " ".join(hit.content.split())[:90]
        table.add_row(str(hit.rank), f"{hit.chunk_id}\n[dim]{preview}[/dim]", semantic, lexical, _fmt(p.fused_score, 5))
    return table


def operation_summary(op: RagIngestionOperation) -> str:
    p = op.progress
    failure = f", last failure: {op.last_failure.code}" if op.last_failure else ""
    return (
        f"{op.index_name}: {op.state.value} in {op.duration_seconds or 0:.2f}s — discovered {p.discovered_documents}, "
        f"added {p.added_documents}, updated {p.updated_documents}, skipped {p.skipped_documents}, "
        f"deleted {p.deleted_documents}, failed {p.failed_documents}, chunks {p.produced_chunks}{failure}"
    )


def status_table(registry: IndexRegistry, manager: RagIngestionManager) -> Table:
    table = Table(title="RAG indexes")
    for column in ("index", "strategy", "sources", "embedding", "store", "metric", "default mode", "readiness"):
        table.add_column(column, overflow="fold")
    for definition in registry:
        strategy = definition.ingestion.kind.value
        if definition.ingestion.schedule:
            strategy += f" ({definition.ingestion.schedule})"
        table.add_row(
            definition.name,
            strategy,
            ", ".join(sorted({s.source_kind for s in definition.sources})),
            definition.embedding.display_name if definition.embedding else "-",
            definition.vector_store.display_name,
            definition.metric.value,
            definition.default_mode.value,
            manager.status(definition.name).readiness.value,
        )
    return table
