"""The RAG management endpoints of reference §2.18: success, 404 and 409 cases, DTO shapes."""

from __future__ import annotations

import httpx
import pytest

from runiq.hosting import Host, HostBuilder
from runiq.rag import RagIngestionManager, RagIngestionState
from runiq.rag.providers import identity_hash
from runiq_dashboard import DashboardCredential, DashboardOptions, DashboardRole, create_dashboard_app

BASE = "/runiq/api/rag/indexes"

NOT_FOUND = {"code": "RagIndexNotFound", "message": "The RAG index is not registered.", "activeOperation": None}
NO_ACTIVE = {
    "code": "NoActiveIngestionOperation",
    "message": "The index has no active ingestion operation.",
    "activeOperation": None,
}
OPERATION_FIELDS = {
    "operationId",
    "indexName",
    "reason",
    "state",
    "startedAt",
    "completedAt",
    "durationMilliseconds",
    "updatedAt",
    "progress",
}


async def test_list_projects_every_index_in_registration_order(api: httpx.AsyncClient) -> None:
    """GET /rag/indexes lists names, hashed sources, safe configuration and readiness."""
    response = await api.get(BASE)
    assert response.status_code == 200
    body = response.json()
    assert [item["name"] for item in body] == ["docs", "nightly", "slow", "broken"]
    docs = body[0]
    assert set(docs) == {
        "name",
        "sourceCount",
        "sources",
        "configuration",
        "readiness",
        "activeOperation",
        "lastOperation",
    }
    assert docs["readiness"] == "not_initialized"
    assert docs["activeOperation"] is None
    assert docs["lastOperation"] is None
    assert docs["sourceCount"] == 1
    [source] = docs["sources"]
    assert source["type"] == "directory"
    assert len(source["identity"]) == 16
    assert source["identity"] == source["identity"].lower()
    assert source["displayValue"] == f"Source {source['identity']}"
    assert docs["configuration"] == {
        "ingestionStrategy": "manual",
        "scheduleExpression": None,
        "scheduleTimeZone": None,
        "vectorStoreType": "guarded-store",
        "vectorStoreReference": "safe-store",
        "embeddingType": "hashing",
        "embeddingReference": "Hashing embedder (64 dimensions)",
        "rerankerReference": None,
        "metric": "cosine",
        "defaultRetrievalMode": "semantic",
        "chunkSize": 1000,
        "chunkOverlap": 100,
        "embeddingBatchSize": 64,
        "embeddingConcurrency": 2,
        "embeddingTimeoutSeconds": 60.0,  # the default per-call embedding timeout
    }
    nightly = body[1]["configuration"]
    assert nightly["ingestionStrategy"] == "scheduled"
    assert nightly["scheduleExpression"] == "0 3 * * *"
    assert nightly["scheduleTimeZone"] == "Europe/Berlin"
    assert body[3]["configuration"]["embeddingType"] is None


async def test_source_identity_is_the_identity_hash_of_the_source_identity(api: httpx.AsyncClient, host: Host) -> None:
    """The hash is runiq's identity_hash of DocumentSource.identity, so it is stable and hides the path."""
    from runiq.rag import IndexRegistry

    identity = host.services.get(IndexRegistry).get("docs").sources[0].identity
    response = await api.get(f"{BASE}/docs")
    assert response.json()["sources"][0]["identity"] == identity_hash(identity)


async def test_detail_has_overview_sources_configuration_and_runtime(api: httpx.AsyncClient) -> None:
    """GET /rag/indexes/{name} returns the detail DTO."""
    response = await api.get(f"{BASE}/nightly")
    assert response.status_code == 200
    body = response.json()
    assert body["overview"] == {"name": "nightly", "sourceCount": 1}
    assert body["sources"][0]["type"] == "in-memory"
    assert body["configuration"]["ingestionStrategy"] == "scheduled"
    runtime = body["runtime"]
    assert runtime["indexName"] == "nightly"
    assert runtime["readiness"] == "not_initialized"
    assert runtime["activeOperation"] is None
    assert runtime["lastOperation"] is None
    assert runtime["progress"] is None
    assert runtime["lastFailure"] is None
    assert runtime["lastUpdatedAt"].endswith("Z")


@pytest.mark.parametrize(
    ("method", "suffix"),
    [
        ("GET", ""),
        ("GET", "/status"),
        ("GET", "/runs"),
        ("GET", "/runs/any/failures"),
        ("GET", "/store"),
        ("POST", "/ingestion/start"),
        ("POST", "/ingestion/cancel"),
    ],
)
@pytest.mark.parametrize("name", ["missing", "DOCS", "docs%20", "d%C3%B6cs"])
async def test_unknown_index_is_404_on_every_index_endpoint(
    api: httpx.AsyncClient, method: str, suffix: str, name: str
) -> None:
    """Index names match ordinally and case-sensitively; unknown names get the fixed 404 body."""
    response = await api.request(method, f"{BASE}/{name}{suffix}")
    assert response.status_code == 404
    assert response.json() == NOT_FOUND


async def test_start_returns_202_with_the_running_operation(api: httpx.AsyncClient, host: Host) -> None:
    """POST start answers 202 at once with the running operation; the run completes on its own."""
    response = await api.post(f"{BASE}/docs/ingestion/start")
    assert response.status_code == 202
    operation = response.json()
    assert set(operation) == OPERATION_FIELDS
    assert operation["indexName"] == "docs"
    assert operation["reason"] == "manual"
    assert operation["state"] == "running"
    assert operation["completedAt"] is None
    finished = await host.services.get(RagIngestionManager).wait("docs")
    assert finished.operation_id == operation["operationId"]
    assert finished.state is RagIngestionState.COMPLETED

    status = (await api.get(f"{BASE}/docs/status")).json()
    assert status["readiness"] == "ready"
    assert status["activeOperation"] is None
    last = status["lastOperation"]
    assert last["operationId"] == operation["operationId"]
    assert last["state"] == "completed"
    assert last["completedAt"] is not None
    assert last["durationMilliseconds"] >= 0
    assert status["progress"].pop("embeddingCalls") >= 1
    assert status["progress"] == {
        "discoveredDocuments": 2,
        "processedDocuments": 2,
        "addedDocuments": 2,
        "updatedDocuments": 0,
        "skippedDocuments": 0,
        "deletedDocuments": 0,
        "failedDocuments": 0,
        "producedChunks": 2,
        "producedEmbeddings": 2,
        "skippedFiles": 0,
    }
    listed = (await api.get(BASE)).json()[0]
    assert listed["readiness"] == "ready"
    assert listed["lastOperation"]["state"] == "completed"


async def test_start_on_a_scheduled_index_is_a_manual_run(api: httpx.AsyncClient, host: Host) -> None:
    """Every strategy allows an explicit run: a Scheduled index starts with reason manual."""
    response = await api.post(f"{BASE}/nightly/ingestion/start")
    assert response.status_code == 202
    assert response.json()["indexName"] == "nightly"
    assert response.json()["reason"] == "manual"
    await host.services.get(RagIngestionManager).wait("nightly")


async def test_second_start_while_running_is_409_with_the_active_operation(api: httpx.AsyncClient) -> None:
    """The manager is the conflict authority; the 409 body carries the active operation."""
    first = await api.post(f"{BASE}/slow/ingestion/start")
    assert first.status_code == 202
    second = await api.post(f"{BASE}/slow/ingestion/start")
    assert second.status_code == 409
    body = second.json()
    assert body["code"] == "ActiveIngestionOperation"
    assert body["message"] == "The index already has an active ingestion operation."
    assert body["activeOperation"]["state"] == "running"
    assert body["activeOperation"]["operationId"] == first.json()["operationId"]


async def test_status_while_running_shows_initializing_readiness_and_the_active_operation(
    api: httpx.AsyncClient,
) -> None:
    """Readiness and operation state are separate fields: initializing + running."""
    started = (await api.post(f"{BASE}/slow/ingestion/start")).json()
    status = (await api.get(f"{BASE}/slow/status")).json()
    assert status["readiness"] == "initializing"
    assert status["activeOperation"]["operationId"] == started["operationId"]
    assert status["activeOperation"]["state"] == "running"
    assert status["activeOperation"]["completedAt"] is None
    assert status["progress"] is not None


async def test_cancel_active_returns_200_with_the_cancelled_operation(api: httpx.AsyncClient) -> None:
    """POST cancel waits for the run to stop and returns the terminal operation."""
    started = (await api.post(f"{BASE}/slow/ingestion/start")).json()
    response = await api.post(f"{BASE}/slow/ingestion/cancel")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == OPERATION_FIELDS
    assert body["operationId"] == started["operationId"]
    assert body["state"] == "cancelled"
    assert body["completedAt"] is not None
    status = (await api.get(f"{BASE}/slow/status")).json()
    assert status["readiness"] == "not_initialized"
    assert status["activeOperation"] is None
    assert status["lastOperation"]["state"] == "cancelled"


async def test_cancel_with_nothing_running_is_409(api: httpx.AsyncClient, host: Host) -> None:
    """Cancel on an idle index, before and after a run, is 409 NoActiveIngestionOperation."""
    response = await api.post(f"{BASE}/docs/ingestion/cancel")
    assert response.status_code == 409
    assert response.json() == NO_ACTIVE
    await api.post(f"{BASE}/docs/ingestion/start")
    await host.services.get(RagIngestionManager).wait("docs")
    response = await api.post(f"{BASE}/docs/ingestion/cancel")
    assert response.status_code == 409
    assert response.json() == NO_ACTIVE


async def test_partial_failure_reports_a_hashed_document_and_the_fixed_message(
    api: httpx.AsyncClient, host: Host
) -> None:
    """lastFailure has a stable code, a hashed document identity and always the same message."""
    await api.post(f"{BASE}/broken/ingestion/start")
    await host.services.get(RagIngestionManager).wait("broken")
    status = (await api.get(f"{BASE}/broken/status")).json()
    assert status["readiness"] == "degraded"
    assert status["lastOperation"]["state"] == "partially_completed"
    failure = status["lastFailure"]
    assert failure["code"] == "undecodable"
    assert failure["message"] == "The ingestion operation failed. Review server logs using the operation identity."
    assert failure["sourceType"] == "directory"
    assert len(failure["documentIdentity"]) == 16


async def test_start_after_the_host_stopped_is_503(host_factory, client_for) -> None:  # type: ignore[no-untyped-def]
    """A stopped host's manager refuses runs; the API says so with a fixed 503 body."""
    host = host_factory()
    async with host:
        pass
    response = await client_for(create_dashboard_app(host)).post(f"{BASE}/docs/ingestion/start")
    assert response.status_code == 503
    assert response.json()["code"] == "IngestionUnavailable"


async def test_without_rag_the_rag_endpoints_do_not_exist(client_for) -> None:  # type: ignore[no-untyped-def]
    """A host without RAG gets the page but no RAG routes (fixed 404 EndpointNotFound)."""
    host = HostBuilder(load_entry_points=False).build()
    api = client_for(create_dashboard_app(host))
    response = await api.get(BASE)
    assert response.status_code == 404
    assert response.json()["code"] == "EndpointNotFound"
    assert (await api.get("/runiq/")).status_code == 200


async def test_base_path_is_configurable(host: Host, client_for) -> None:  # type: ignore[no-untyped-def]
    """Everything moves under the normalised base path."""
    api = client_for(create_dashboard_app(host, DashboardOptions(base_path="ops/dashboard/")))
    assert (await api.get("/ops/dashboard/api/rag/indexes")).status_code == 200
    assert (await api.get("/ops/dashboard/")).status_code == 200
    redirect = await api.get("/ops/dashboard")
    assert redirect.status_code == 307
    assert redirect.headers["location"] == "/ops/dashboard/"
    assert (await api.get(BASE)).status_code == 404


async def test_unknown_api_path_and_unknown_asset_are_fixed_404s(api: httpx.AsyncClient) -> None:
    """Unknown routes never reveal framework text, whatever the method."""
    for method, path in [
        ("GET", "/runiq/api/nothing"),
        ("GET", "/runiq/api/rag"),
        ("GET", "/runiq/assets/../../etc/passwd"),
        ("GET", "/runiq/assets/nothing.js"),
        ("GET", "/elsewhere"),
        ("POST", "/runiq/api/nothing"),
        ("PROPFIND", "/runiq/api/nothing"),
    ]:
        response = await api.request(method, path)
        assert response.status_code == 404
        assert response.json() == {
            "code": "EndpointNotFound",
            "message": "Runiq endpoint was not found.",
            "activeOperation": None,
        }


async def test_openapi_document_lists_every_endpoint(api: httpx.AsyncClient) -> None:
    """The generated OpenAPI document is served under the API base, behind the policy."""
    response = await api.get("/runiq/api/openapi.json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert set(paths) == {
        "/runiq/api/access",
        "/runiq/api/rag/indexes",
        "/runiq/api/rag/indexes/{index_name}",
        "/runiq/api/rag/indexes/{index_name}/status",
        "/runiq/api/rag/indexes/{index_name}/runs",
        "/runiq/api/rag/indexes/{index_name}/runs/{operation_id}/failures",
        "/runiq/api/rag/indexes/{index_name}/store",
        "/runiq/api/rag/indexes/{index_name}/ingestion/start",
        "/runiq/api/rag/indexes/{index_name}/ingestion/cancel",
        "/runiq/api/rag/indexes/{index_name}/query",
    }
    query_body = paths["/runiq/api/rag/indexes/{index_name}/query"]["post"]["requestBody"]
    assert set(query_body["content"]["application/json"]["schema"]["properties"]) == {
        "text",
        "mode",
        "top_k",
        "filters",
    }
    assert set(paths["/runiq/api/rag/indexes/{index_name}/ingestion/start"]["post"]["responses"]) >= {
        "202",
        "401",
        "403",
        "404",
        "409",
    }


async def test_responses_carry_no_store_and_security_headers(api: httpx.AsyncClient) -> None:
    """API answers are never cached; the page has a strict CSP."""
    response = await api.get(BASE)
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-content-type-options"] == "nosniff"
    page = await api.get("/runiq/")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"
    script = await api.get("/runiq/assets/dashboard.js")
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")


# Every declared path with its one declared method (the page's and the API's).
DECLARED = [
    ("/runiq/api/access", "GET"),
    (f"{BASE}", "GET"),
    (f"{BASE}/docs", "GET"),
    (f"{BASE}/docs/status", "GET"),
    (f"{BASE}/docs/runs", "GET"),
    (f"{BASE}/docs/runs/any/failures", "GET"),
    (f"{BASE}/docs/store", "GET"),
    (f"{BASE}/docs/query", "POST"),
    (f"{BASE}/docs/ingestion/start", "POST"),
    (f"{BASE}/docs/ingestion/cancel", "POST"),
    ("/runiq/api/openapi.json", "GET"),
    ("/runiq", "GET"),
    ("/runiq/", "GET"),
    ("/runiq/assets/dashboard.js", "GET"),
]
METHOD_NOT_ALLOWED = {
    "code": "MethodNotAllowed",
    "message": "The method is not allowed for this endpoint.",
    "activeOperation": None,
}


@pytest.mark.parametrize(("path", "declared"), DECLARED, ids=[path for path, _ in DECLARED])
async def test_an_undeclared_method_on_a_declared_path_is_405_with_allow(
    api: httpx.AsyncClient, path: str, declared: str
) -> None:
    """Not 404: the path exists, and Allow names the method it does accept (HEAD is not implied)."""
    methods = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND"}
    for method in sorted(methods - {declared}):
        response = await api.request(method, path)
        assert (method, response.status_code) == (method, 405)
        assert response.headers["allow"] == declared
        if method != "HEAD":
            assert response.json() == METHOD_NOT_ALLOWED


async def test_405_and_404_answer_only_after_the_access_policy(host: Host, client_for) -> None:  # type: ignore[no-untyped-def]
    """Undeclared methods and unknown paths reveal nothing to a caller the policy refuses."""
    key = "operate-key-0123456789abcdef"
    options = DashboardOptions(
        credentials=(DashboardCredential(name="ops", secret=key, roles=frozenset({DashboardRole.OPERATE})),)
    )
    app = create_dashboard_app(host, options)
    anonymous, operator = client_for(app), client_for(app, headers={"X-API-Key": key})
    probes = [("PUT", BASE), ("DELETE", "/runiq/"), ("POST", "/runiq/assets/dashboard.js"), ("GET", "/runiq/x")]
    for method, path in probes:
        assert (await anonymous.request(method, path)).status_code == 401
        assert (await operator.request(method, path)).status_code in (404, 405)
    remote = client_for(create_dashboard_app(host), client=("203.0.113.7", 40000))
    assert (await remote.request("PATCH", f"{BASE}/docs")).status_code == 403
