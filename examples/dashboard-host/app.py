"""A host application that embeds the runiq dashboard next to its own routes.

The application owns the runiq host's lifecycle (its lifespan starts and stops the host), mounts the
dashboard under /runiq, and protects it with API keys: a read key for the status views and an operate key
for starting and cancelling ingestion.

Run: RUNIQ_EXAMPLE_READ_KEY=... RUNIQ_EXAMPLE_OPERATE_KEY=... uvicorn app:app   (from this directory)
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from pydantic import SecretStr
from runiq_dashboard import DashboardCredential, DashboardOptions, DashboardRole, create_dashboard_app

from runiq.hosting import Host, HostBuilder
from runiq.rag import HashingEmbedding, RagQuery, RagRetrievalMode, RagRetriever, add_runiq_rag

DOCUMENTS = Path(__file__).resolve().parent.parent / "corporate-documents" / "documents"


def build_host() -> Host:
    builder = HostBuilder(load_entry_points=False)
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "corporate-documents",
            lambda index: (
                index.use_directory(DOCUMENTS, "*.md", recursive=True)
                .use_embedding(HashingEmbedding())
                .use_in_memory_vector_store()
                .configure_ingestion(lambda ingestion: ingestion.background_on_startup())
            ),
        ),
    )
    return builder.build()


def dashboard_options(read_key: str, operate_key: str) -> DashboardOptions:
    return DashboardOptions(
        base_path="/runiq",
        credentials=[
            DashboardCredential(name="viewer", secret=SecretStr(read_key), roles=frozenset({DashboardRole.READ})),
            DashboardCredential(
                name="operator", secret=SecretStr(operate_key), roles=frozenset({DashboardRole.OPERATE})
            ),
        ],
    )


def create_app(read_key: str, operate_key: str) -> FastAPI:
    host = build_host()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with host:  # BackgroundOnStartup ingestion starts here and is cancelled on shutdown
            yield

    app = FastAPI(title="Corporate assistant", lifespan=lifespan)

    @app.get("/search")
    async def search(q: str) -> dict[str, list[str]]:
        result = await host.services.get(RagRetriever).retrieve(
            RagQuery(index_name="corporate-documents", text=q, mode=RagRetrievalMode.HYBRID, top_k=3)
        )
        return {"documents": [hit.document_id for hit in result.hits]}

    app.mount("/", create_dashboard_app(host, dashboard_options(read_key, operate_key)))
    return app


if os.environ.get("RUNIQ_EXAMPLE_READ_KEY") and os.environ.get("RUNIQ_EXAMPLE_OPERATE_KEY"):
    app = create_app(os.environ["RUNIQ_EXAMPLE_READ_KEY"], os.environ["RUNIQ_EXAMPLE_OPERATE_KEY"])
