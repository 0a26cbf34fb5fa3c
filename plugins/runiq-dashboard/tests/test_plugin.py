"""The entry point and the runiq_configure_host hook: options from code or RUNIQ_DASHBOARD__* variables."""

from __future__ import annotations

import json
from importlib.metadata import entry_points

import httpx
import pytest
from pydantic import ValidationError

import runiq_dashboard
from runiq.hosting import Host, HostBuilder
from runiq.rag import RagDocument, add_runiq_rag
from runiq_dashboard import DashboardOptions, add_runiq_dashboard, create_dashboard_app
from runiq_dashboard import plugin as dashboard_plugin

KEY = "env-operate-key-0123456789"


def small_host(builder: HostBuilder) -> Host:
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "notes",
            lambda index: (
                index.use_documents([RagDocument(document_id="n", content="hello")])
                .use_in_memory_vector_store()
                .use_default_mode("lexical")
            ),
        ),
    )
    return builder.build()


def test_hook_entry_point_is_declared() -> None:
    """Distribution runiq-dashboard registers runiq_dashboard.plugin in the 'runiq' group."""
    [point] = [ep for ep in entry_points(group="runiq") if ep.name == "dashboard"]
    assert point.value == "runiq_dashboard.plugin"
    assert point.load() is dashboard_plugin


async def test_hook_runiq_configure_host_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the plugin loaded, RUNIQ_DASHBOARD__* configures base path and credentials."""
    monkeypatch.setenv("RUNIQ_DASHBOARD__BASE_PATH", "/ops")
    monkeypatch.setenv("RUNIQ_DASHBOARD__TITLE", "Ops <Console>")
    monkeypatch.setenv(
        "RUNIQ_DASHBOARD__CREDENTIALS", json.dumps([{"name": "ops", "secret": KEY, "roles": ["operate"]}])
    )
    host = small_host(HostBuilder(load_entry_points=False, plugins=[dashboard_plugin]))
    assert host.services.get(DashboardOptions).base_path == "/ops"
    app = create_dashboard_app(host)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as anonymous:
        assert (await anonymous.get("/ops/api/rag/indexes")).status_code == 401
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1", headers={"Authorization": f"Bearer {KEY}"}
    ) as operator:
        assert [i["name"] for i in (await operator.get("/ops/api/rag/indexes")).json()] == ["notes"]
        page = (await operator.get("/ops/")).text
        assert "<title>Ops &lt;Console&gt;</title>" in page


async def test_querying_is_configured_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """RUNIQ_DASHBOARD__ENABLE_QUERY and __QUERY_RATE_LIMIT; a query key without ENABLE_QUERY is an error."""
    monkeypatch.setenv("RUNIQ_DASHBOARD__CREDENTIALS", json.dumps([{"name": "cli", "secret": KEY, "roles": ["query"]}]))
    with pytest.raises(ValidationError, match="enable_query"):
        create_dashboard_app(small_host(HostBuilder(load_entry_points=False, plugins=[dashboard_plugin])))
    monkeypatch.setenv("RUNIQ_DASHBOARD__ENABLE_QUERY", "true")
    monkeypatch.setenv("RUNIQ_DASHBOARD__QUERY_RATE_LIMIT", "1")
    host = small_host(HostBuilder(load_entry_points=False, plugins=[dashboard_plugin]))
    options = host.services.get(DashboardOptions)
    assert (options.enable_query, options.query_rate_limit) == (True, 1)
    transport = httpx.ASGITransport(app=create_dashboard_app(host))
    headers = {"Authorization": f"Bearer {KEY}"}
    async with host, httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", headers=headers) as cli:
        assert (await cli.get("/runiq/api/access")).json() == {"roles": ["read", "query"]}
        query = {"text": "hello", "mode": "lexical"}
        assert (await cli.post("/runiq/api/rag/indexes/notes/query", json=query)).status_code == 409  # not ingested
        assert (await cli.post("/runiq/api/rag/indexes/notes/query", json=query)).status_code == 429


def test_invalid_environment_credentials_fail_without_echoing_the_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    """A weak key from the environment is rejected when options are first resolved; no secret in the error."""
    monkeypatch.setenv("RUNIQ_DASHBOARD__CREDENTIALS", json.dumps([{"name": "ops", "secret": "weak-Zq9"}]))
    host = small_host(HostBuilder(load_entry_points=False, plugins=[dashboard_plugin]))
    with pytest.raises(ValidationError) as raised:
        create_dashboard_app(host)
    assert "weak-Zq9" not in str(raised.value)


def test_code_options_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """add_runiq_dashboard registers options the hook leaves alone; explicit arguments win over both."""
    monkeypatch.setenv("RUNIQ_DASHBOARD__BASE_PATH", "/from-env")
    builder = HostBuilder(load_entry_points=False, plugins=[dashboard_plugin])
    add_runiq_dashboard(builder, DashboardOptions(base_path="/from-code"))
    host = small_host(builder)
    assert create_dashboard_app(host).state.runiq_dashboard_options.base_path == "/from-code"
    explicit = create_dashboard_app(host, DashboardOptions(base_path="/explicit"))
    assert explicit.state.runiq_dashboard_options.base_path == "/explicit"


def test_public_api_is_sorted_and_importable() -> None:
    """__all__ has no duplicates (ruff RUF022 keeps it sorted) and every name resolves."""
    assert len(set(runiq_dashboard.__all__)) == len(runiq_dashboard.__all__)
    for name in runiq_dashboard.__all__:
        assert getattr(runiq_dashboard, name) is not None
