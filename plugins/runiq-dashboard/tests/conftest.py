"""Fixtures: a host with four indexes, planted secrets, ASGI clients, and a real uvicorn server thread.

Planted secrets (none may appear in any response): the canary in document content and file names, a
source directory whose path contains "secret", and a vector-store DSN with a password.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, ConfigDict, SecretStr

from runiq.hosting import Host, HostBuilder
from runiq.rag import HashingEmbedding, RagDocument, add_runiq_rag
from runiq.rag.providers import InMemoryVectorStore, ProviderRegistry, hookimpl
from runiq.rag.testing import CANARY, SlowEmbedder
from runiq_dashboard import DashboardOptions, DashboardServer, create_dashboard_app

SECRET_DSN = f"postgresql://runiq:{CANARY}-password@db.internal:5432/secretdb"
SLOW_DOCUMENTS = 40
SLOW_DELAY_SECONDS = 0.5  # 40 documents, 4 at a time: a run lasts ~5 s unless cancelled


class SlowOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    delay: float = SLOW_DELAY_SECONDS


class GuardedStoreOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    dsn: SecretStr


@dataclass(frozen=True, slots=True)
class GuardedStore:
    """A typed selection whose options hold a DSN with a password; only ``display_name`` is safe."""

    dsn: str
    provider_name: str = "guarded-store"
    display_name: str = "safe-store"

    def provider_options(self) -> dict[str, object]:
        return {"dsn": self.dsn}


@asynccontextmanager
async def _slow(options: SlowOptions) -> AsyncIterator[SlowEmbedder]:
    yield SlowEmbedder(options.delay)


@asynccontextmanager
async def _guarded(options: GuardedStoreOptions) -> AsyncIterator[InMemoryVectorStore]:
    yield InMemoryVectorStore()


class DashboardTestProviders:
    @hookimpl
    def runiq_register_providers(self, registry: ProviderRegistry) -> None:
        registry.add_embedding("slow", _slow, options=SlowOptions)
        registry.add_vector_store("guarded-store", _guarded, options=GuardedStoreOptions)


@pytest.fixture
def secret_dir(tmp_path: Path) -> Path:
    """Source directories under a path containing 'secret' and the canary, with canary content."""
    root = tmp_path / f"secret-vault-{CANARY}"
    docs = root / "docs"
    docs.mkdir(parents=True)
    (docs / f"policy-{CANARY}.md").write_text(f"# Policy\n\nThe code word is {CANARY}.\n", encoding="utf-8")
    (docs / "handbook.md").write_text(f"# Handbook\n\nRemote work, see {CANARY}.\n", encoding="utf-8")
    broken = root / "broken"
    broken.mkdir()
    (broken / "good.md").write_text(f"# Good\n\n{CANARY} is fine.\n", encoding="utf-8")
    (broken / f"undecodable-{CANARY}.md").write_bytes(b"\x00\x00\x00\x01 not text \xff\x00 " + CANARY.encode())
    return root


def build_host(secret_dir: Path, **builder_options: Any) -> Host:
    builder = HostBuilder(load_entry_points=False, plugins=[DashboardTestProviders()], **builder_options)
    slow_documents = [
        RagDocument(document_id=f"slow-{n:02d}", content=f"Slow document {n} mentions {CANARY}.")
        for n in range(SLOW_DOCUMENTS)
    ]
    add_runiq_rag(
        builder,
        lambda rag: (
            rag.add_index(
                "docs",
                lambda index: (
                    index.use_directory(secret_dir / "docs", "*.md")
                    .use_embedding(HashingEmbedding(dimensions=64))
                    .use_vector_store(GuardedStore(dsn=SECRET_DSN))
                ),
            )
            .add_index(
                "nightly",
                lambda index: (
                    index.use_documents([RagDocument(document_id="n1", content="Nightly content.")])
                    .use_embedding(HashingEmbedding(dimensions=64))
                    .use_in_memory_vector_store()
                    .configure_ingestion(lambda ingestion: ingestion.scheduled("0 3 * * *", "Europe/Berlin"))
                ),
            )
            .add_index(
                "slow",
                lambda index: (
                    index.use_documents(slow_documents)
                    .use_embedding("slow")
                    .configure_embedding_batching(batch_size=4, concurrency=1)
                    .use_in_memory_vector_store()
                ),
            )
            .add_index(
                "broken",
                lambda index: (
                    index.use_directory(secret_dir / "broken", "*.md")
                    .use_in_memory_vector_store()
                    .use_default_mode("lexical")
                ),
            )
        ),
    )
    return builder.build()


@pytest.fixture
def host_factory(secret_dir: Path) -> Callable[[], Host]:
    """Builds (does not start) a fresh host over the planted directories."""
    return lambda: build_host(secret_dir)


@pytest.fixture
async def host(secret_dir: Path) -> AsyncIterator[Host]:
    """A started host; stopping it cancels and awaits any ingestion a test left running."""
    async with build_host(secret_dir) as started:
        yield started


ClientFactory = Callable[..., httpx.AsyncClient]


@pytest.fixture
async def client_for() -> AsyncIterator[ClientFactory]:
    """``client_for(app, client=("127.0.0.1", 50000), base_url="http://127.0.0.1", headers=...)``."""
    clients: list[httpx.AsyncClient] = []

    def make(
        app: Any,
        *,
        client: tuple[str, int] = ("127.0.0.1", 50000),
        base_url: str = "http://127.0.0.1",
        headers: dict[str, str] | None = None,
        raise_app_exceptions: bool = True,
    ) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=app, client=client, raise_app_exceptions=raise_app_exceptions)
        made = httpx.AsyncClient(transport=transport, base_url=base_url, headers=headers)
        clients.append(made)
        return made

    yield make
    for made in clients:
        await made.aclose()


@pytest.fixture
def api(host: Host, client_for: ClientFactory) -> httpx.AsyncClient:
    """A loopback client of the default (loopback-only) dashboard."""
    return client_for(create_dashboard_app(host))


class ServerThread:
    """A real uvicorn server for ``host`` on 127.0.0.1 in its own thread and event loop."""

    def __init__(self, host: Host, options: DashboardOptions | None = None, *, log_level: str = "warning") -> None:
        self.server = DashboardServer(host, host="127.0.0.1", port=0, options=options, log_level=log_level)
        self._thread = threading.Thread(target=self._run, name="dashboard-server", daemon=True)
        self._error: BaseException | None = None

    def _run(self) -> None:
        try:
            asyncio.run(self.server.run())
        except BaseException as exc:  # surfaced by start()/stop()
            self._error = exc

    def start(self) -> ServerThread:
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started.is_set():
            if self._error is not None or not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the dashboard server did not start") from self._error
            time.sleep(0.02)
        return self

    @property
    def url(self) -> str:
        return self.server.url

    def stop(self) -> None:
        """Idempotent; a server that was never started has nothing to stop."""
        if self._thread.ident is None:
            return
        self.server.request_stop()
        self._thread.join(timeout=15)
        assert not self._thread.is_alive(), "the dashboard server did not stop"
        if self._error is not None:
            raise self._error


ServerFactory = Callable[..., ServerThread]


@pytest.fixture
def server_factory(secret_dir: Path) -> Iterator[ServerFactory]:
    """``server_factory(options=None, log_level="warning")``: a server not yet started (add routes or
    middleware to ``.server.app``, then ``.start()``); stopped at teardown if the test did not."""
    servers: list[ServerThread] = []

    def make(options: DashboardOptions | None = None, *, log_level: str = "warning") -> ServerThread:
        servers.append(ServerThread(build_host(secret_dir), options, log_level=log_level))
        return servers[-1]

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def live_server(secret_dir: Path) -> Iterator[ServerThread]:
    server = ServerThread(build_host(secret_dir)).start()
    yield server
    server.stop()
