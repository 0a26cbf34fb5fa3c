"""The core works without ``opentelemetry-api``: a meta-path finder makes it unimportable in a fresh interpreter.

The interpreter ingests, retrieves in every mode (one failing), assembles a reranked context and runs a
stage span; it must succeed, runiq must have tried the import only then (so the lazy path really ran),
and no ``opentelemetry`` module may be loaded afterwards. (Other libraries try it too: dependency-injector
imports FastAPI when it is installed, which imports the API; only runiq's own attempts are counted.)
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import asyncio
    import sys


    class Blocker:
        attempts = []  # (importing module, name): only runiq's own attempts count below

        def find_spec(self, name, path=None, target=None):
            if name == "opentelemetry" or name.startswith("opentelemetry."):
                frame = sys._getframe(1)
                while frame is not None and frame.f_globals.get("__name__", "").startswith(("importlib", "_frozen")):
                    frame = frame.f_back
                importer = frame.f_globals.get("__name__", "") if frame is not None else ""
                if importer.startswith("runiq"):
                    self.attempts.append((importer, name))
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None


    blocker = Blocker()
    sys.meta_path.insert(0, blocker)

    from runiq.hosting import HostBuilder
    from runiq.rag import (
        HashingEmbedding, IndexNotFoundError, RagContextAssembler, RagContextOptions,
        RagDocument, RagIngestionManager, RagIngestionState, RagQuery, RagRetrievalMode, RagRetriever,
        RerankingOptions, add_runiq_rag,
    )
    from runiq.rag._reranking import LexicalOverlapReranker
    from runiq.rag._observability.otel import ingestion_span, stage_span

    assert not blocker.attempts, blocker.attempts  # importing runiq does not import opentelemetry


    async def main() -> None:
        builder = HostBuilder(load_entry_points=False)
        add_runiq_rag(builder, lambda rag: rag.add_index("docs", lambda index: index
            .use_documents([RagDocument(document_id="a", content="Error CS1503 in the build.")])
            .use_embedding(HashingEmbedding(dimensions=32)).use_in_memory_vector_store()))
        async with builder.build() as host:
            operation = await host.services.get(RagIngestionManager).run("docs")
            assert operation.state is RagIngestionState.COMPLETED
            retriever = host.services.get(RagRetriever)
            for mode in RagRetrievalMode:
                result = await retriever.retrieve(RagQuery(index_name="docs", text="CS1503 build", mode=mode))
                assert result.hits[0].document_id == "a"
            try:
                await retriever.retrieve(RagQuery(index_name="missing", text="CS1503"))
            except IndexNotFoundError:
                pass
            else:
                raise AssertionError("an unknown index must fail")
            context = await RagContextAssembler(retriever, LexicalOverlapReranker()).assemble(
                RagQuery(index_name="docs", text="CS1503 build"),
                RagContextOptions(reranking=RerankingOptions(enabled=True)),
            )
            assert context.reranking.outcome.value == "succeeded"
        with ingestion_span("docs", "op") as run, stage_span("embed", index="docs", items=1) as stage:
            stage.counts(failed=0)
            run.fail("ValueError")
            assert not run.recording


    asyncio.run(main())
    assert blocker.attempts, "the lazy import was never attempted"
    assert not [name for name in sys.modules if name.split(".")[0] == "opentelemetry"]
    print("ok", len(blocker.attempts))
    """
)


def test_the_core_runs_without_opentelemetry() -> None:
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines()[-1].startswith("ok ")
