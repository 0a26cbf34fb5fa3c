"""Serving: DashboardServer over a real socket, and serve_config (what `runiq serve CONFIG` runs)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from runiq.rag import IndexRegistry, RagConfigurationError
from runiq.rag.testing import CANARY
from runiq.rag.testing.chains import assert_content_free
from runiq_dashboard import DashboardServer, serve_config


async def test_live_server_serves_the_api_over_tcp(live_server) -> None:  # type: ignore[no-untyped-def]
    """A real uvicorn on 127.0.0.1: loopback clients are served, with the host's indexes."""
    async with httpx.AsyncClient() as client:
        response = await client.get(live_server.url + "api/rag/indexes")
    assert response.status_code == 200
    assert [item["name"] for item in response.json()] == ["docs", "nightly", "slow", "broken"]


async def test_serve_config_builds_the_host_from_a_runiq_toml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The indexes of the TOML file are what the served host has."""
    (tmp_path / "docs").mkdir()
    config = tmp_path / "runiq.toml"
    config.write_text(
        '[rag.indexes.handbook]\nsources = [{ path = "docs", pattern = "*.md" }]\ndefault_mode = "lexical"\n',
        encoding="utf-8",
    )
    served: list[tuple[str, ...]] = []

    async def fake_run(self: DashboardServer) -> None:
        served.append(self._runiq_host.services.get(IndexRegistry).names)

    monkeypatch.setattr(DashboardServer, "run", fake_run)
    await serve_config(config, port=0)
    assert served == [("handbook",)]


async def test_serve_config_rejects_missing_and_invalid_files_without_values(tmp_path: Path) -> None:
    """Configuration errors name fields, never the values (which may be secrets)."""
    with pytest.raises(RagConfigurationError):
        await serve_config(tmp_path / "missing.toml")
    config = tmp_path / "runiq.toml"
    config.write_text(f'[rag.indexes.handbook]\nmetric = "{CANARY}"\n', encoding="utf-8")
    with pytest.raises(RagConfigurationError) as raised:
        await serve_config(config)
    assert "metric" in str(raised.value)
    assert CANARY not in str(raised.value)
    # Raised outside ``except``: the ValidationError holds every value (a DSN, a key) as input.
    assert raised.value.__context__ is None
    assert_content_free(raised.value, CANARY)
    config.write_text(f'[rag.indexes.handbook\nmetric = "{CANARY}', encoding="utf-8")
    with pytest.raises(RagConfigurationError) as raised:
        await serve_config(config)
    assert CANARY not in str(raised.value)
    assert_content_free(raised.value, CANARY)
