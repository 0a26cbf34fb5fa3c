"""Canary tests: no response ever contains document content, a path, a DSN, a key or exception text."""

from __future__ import annotations

from pathlib import Path

import httpx

from runiq.hosting import Host
from runiq.rag import RagIngestionManager
from runiq.rag.providers import identity_hash
from runiq.rag.testing import CANARY
from runiq_dashboard import DashboardCredential, DashboardOptions, DashboardRole, create_dashboard_app

BASE = "/runiq/api/rag/indexes"
API_KEY = f"key-{CANARY}-0123456789"


def assert_clean(text: str, secret_dir: Path) -> None:
    lowered = text.lower()
    assert CANARY.lower() not in lowered
    assert "secret" not in lowered  # the directory name, the DSN database, the vault
    assert "password" not in lowered
    assert "db.internal" not in lowered
    assert "postgresql://" not in lowered
    assert str(secret_dir) not in text
    assert secret_dir.name not in text
    assert "traceback" not in lowered
    assert "error:" not in lowered


async def collect(api: httpx.AsyncClient, host: Host) -> list[str]:
    """Every endpoint, idle, running, conflicting, cancelled, failed and completed."""
    manager = host.services.get(RagIngestionManager)
    bodies: list[str] = []

    async def call(method: str, path: str) -> None:
        response = await api.request(method, path)
        bodies.append(response.text)
        bodies.extend(f"{name}: {value}" for name, value in response.headers.items())

    names = ["docs", "nightly", "slow", "broken", "missing"]
    for name in names:
        await call("GET", f"{BASE}/{name}")
        await call("GET", f"{BASE}/{name}/status")
        await call("POST", f"{BASE}/{name}/ingestion/cancel")
        await call("POST", f"{BASE}/{name}/ingestion/start")
        await call("POST", f"{BASE}/{name}/ingestion/start")  # conflict while running (slow), or after
    await call("GET", BASE)
    await call("GET", f"{BASE}/slow/status")
    await call("POST", f"{BASE}/slow/ingestion/cancel")
    for name in ("docs", "nightly", "broken"):
        await manager.wait(name)
    for name in names:
        await call("GET", f"{BASE}/{name}")
        await call("GET", f"{BASE}/{name}/status")
    await call("GET", BASE)
    await call("GET", "/runiq/api/openapi.json")
    await call("GET", "/runiq/")
    await call("GET", "/runiq/api/nothing")
    return bodies


async def test_no_response_contains_a_planted_secret(api: httpx.AsyncClient, host: Host, secret_dir: Path) -> None:
    """Content canary, 'secret' source path and DSN password never leave the server."""
    from runiq.rag import IndexRegistry

    docs = host.services.get(IndexRegistry).get("docs")
    assert "secret" in docs.sources[0].identity
    assert CANARY in docs.sources[0].identity
    assert CANARY in docs.vector_store.instance_key
    bodies = await collect(api, host)
    # The runs really happened, so the assertions below are about populated DTOs.
    status = (await api.get(f"{BASE}/broken/status")).json()
    assert status["lastOperation"]["state"] == "partially_completed"
    assert status["lastFailure"]["documentIdentity"] is not None
    assert (await api.get(f"{BASE}/docs/status")).json()["readiness"] == "ready"
    for body in bodies:
        assert_clean(body, secret_dir)


async def test_failure_identity_is_the_hash_of_the_document_id(api: httpx.AsyncClient, host: Host) -> None:
    """The failed file's name (which holds the canary) appears only as its identity hash."""
    await api.post(f"{BASE}/broken/ingestion/start")
    await host.services.get(RagIngestionManager).wait("broken")
    failure = (await api.get(f"{BASE}/broken/status")).json()["lastFailure"]
    expected = identity_hash(f"undecodable-{CANARY}.md")
    assert failure["documentIdentity"] == expected


async def test_api_key_never_appears_in_responses(host: Host, client_for, secret_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """Wrong, right and missing keys: no response body or header repeats a key."""
    options = DashboardOptions(
        credentials=(DashboardCredential(name="ops", secret=API_KEY, roles=frozenset({DashboardRole.OPERATE})),)
    )
    app = create_dashboard_app(host, options)
    texts = []
    for headers in ({}, {"Authorization": f"Bearer {API_KEY}x"}, {"X-API-Key": API_KEY}):
        client = client_for(app, headers=headers)
        for method, path in (("GET", BASE), ("GET", f"{BASE}/docs"), ("POST", f"{BASE}/docs/ingestion/cancel")):
            response = await client.request(method, path)
            texts.append(response.text + repr(dict(response.headers)))
    for text in texts:
        assert API_KEY not in text
        assert_clean(text, secret_dir)
