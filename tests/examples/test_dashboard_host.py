"""The dashboard-host example: app routes and the mounted, key-protected dashboard share one host."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import httpx

APP = Path(__file__).resolve().parents[2] / "examples" / "dashboard-host" / "app.py"
READ, OPERATE = "read-key-0123456789abcdef", "operate-key-0123456789abcdef"


def _module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("dashboard_host_app", APP)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_host_app_serves_search_and_a_protected_dashboard() -> None:
    """/search works after background ingestion; the dashboard needs a key, and operate for start."""
    app = _module().create_app(READ, OPERATE)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 5000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            assert (await client.get("/runiq/api/rag/indexes")).status_code == 401
            read = {"Authorization": f"Bearer {READ}"}
            for _ in range(100):
                status = (await client.get("/runiq/api/rag/indexes/corporate-documents/status", headers=read)).json()
                if status["readiness"] == "ready":
                    break
                await asyncio.sleep(0.05)
            assert status["readiness"] == "ready"
            found = (await client.get("/search", params={"q": "CS1503"})).json()["documents"]
            assert found[0] == "engineering/engineering-support-handbook.md"
            start = "/runiq/api/rag/indexes/corporate-documents/ingestion/start"
            assert (await client.post(start, headers=read)).status_code == 403
            started = await client.post(start, headers={"Authorization": f"Bearer {OPERATE}"})
            assert started.status_code == 202
            assert started.json()["reason"] == "manual"
            assert READ not in started.text and "corporate-documents/documents" not in started.text
