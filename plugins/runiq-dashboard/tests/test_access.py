"""The access policy on every endpoint: credentials with read/operate/query roles, and the loopback default."""

from __future__ import annotations

import base64

import httpx
import pytest
import structlog
from pydantic import ValidationError
from starlette.requests import Request

from runiq.hosting import Host
from runiq.rag import RagIngestionManager
from runiq.rag.testing import CANARY
from runiq_dashboard import (
    AccessOutcome,
    DashboardCredential,
    DashboardOptions,
    DashboardRole,
    create_dashboard_app,
)

READ_KEY = "read-key-0123456789abcdef"
OPERATE_KEY = "operate-key-0123456789abcdef"
QUERY_KEY = "query-key-0123456789abcdef"

# (method, path, role it needs). Kept complete by test_every_api_operation_is_covered_by_the_denial_tests.
ENDPOINTS = [
    ("GET", "/runiq/api/access", DashboardRole.READ),
    ("GET", "/runiq/api/rag/indexes", DashboardRole.READ),
    ("GET", "/runiq/api/rag/indexes/docs", DashboardRole.READ),
    ("GET", "/runiq/api/rag/indexes/docs/status", DashboardRole.READ),
    ("GET", "/runiq/api/rag/indexes/docs/runs", DashboardRole.READ),
    ("GET", "/runiq/api/rag/indexes/docs/runs/none/failures", DashboardRole.READ),
    ("GET", "/runiq/api/rag/indexes/docs/store", DashboardRole.READ),
    ("POST", "/runiq/api/rag/indexes/docs/ingestion/start", DashboardRole.OPERATE),
    ("POST", "/runiq/api/rag/indexes/docs/ingestion/cancel", DashboardRole.OPERATE),
    ("POST", "/runiq/api/rag/indexes/docs/query", DashboardRole.QUERY),
    ("GET", "/runiq/api/openapi.json", DashboardRole.READ),
    ("GET", "/runiq/api/unknown", DashboardRole.READ),
    ("GET", "/runiq", DashboardRole.READ),
    ("GET", "/runiq/", DashboardRole.READ),
    ("GET", "/runiq/assets/dashboard.js", DashboardRole.READ),
]
ENDPOINT_IDS = [f"{method} {path}" for method, path, _ in ENDPOINTS]

UNAUTHENTICATED = {
    "code": "AuthenticationRequired",
    "message": "Authentication is required to use the Runiq dashboard.",
    "activeOperation": None,
}
FORBIDDEN = {
    "code": "Forbidden",
    "message": "You are not allowed to perform this dashboard action.",
    "activeOperation": None,
}


def assert_forbidden_only_if(response: httpx.Response, denied: bool) -> None:
    """A fixed 403 when the role is denied; else the policy let the request through, whatever the route says."""
    if denied:
        assert response.status_code == 403
        assert response.json() == FORBIDDEN
    else:
        assert response.status_code not in (401, 403)


def keyed_options() -> DashboardOptions:
    return DashboardOptions(
        credentials=(
            DashboardCredential(name="viewer", secret=READ_KEY, roles=frozenset({DashboardRole.READ})),
            DashboardCredential(name="operator", secret=OPERATE_KEY, roles=frozenset({DashboardRole.OPERATE})),
            DashboardCredential(name="searcher", secret=QUERY_KEY, roles=frozenset({DashboardRole.QUERY})),
        ),
        enable_query=True,
    )


def basic(secret: str) -> str:
    return "Basic " + base64.b64encode(f"someone:{secret}".encode()).decode()


@pytest.fixture
def keyed_app(host: Host):  # type: ignore[no-untyped-def]
    return create_dashboard_app(host, keyed_options())


async def test_every_api_operation_is_covered_by_the_denial_tests(api: httpx.AsyncClient) -> None:
    """ENDPOINTS lists every operation of the generated OpenAPI document, so each gets denial tests."""
    paths = (await api.get("/runiq/api/openapi.json")).json()["paths"]
    operations = {(method.upper(), path) for path, item in paths.items() for method in item}
    listed = {
        (method, path.replace("/docs", "/{index_name}").replace("/runs/none/", "/runs/{operation_id}/"))
        for method, path, _ in ENDPOINTS
        if path.startswith("/runiq/api/") and not path.endswith(("/openapi.json", "/unknown"))
    }
    assert operations == listed


@pytest.mark.parametrize(("method", "path", "role"), ENDPOINTS, ids=ENDPOINT_IDS)
@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong-key-0123456789abcdef"},
        {"X-API-Key": "wrong-key-0123456789abcdef"},
        {"Authorization": basic("wrong-key-0123456789abcdef")},
        {"Authorization": "Bearer"},
        {"Authorization": "Basic !!!not-base64"},
        {"Authorization": f"Token {OPERATE_KEY}"},
    ],
    ids=["none", "wrong-bearer", "wrong-api-key", "wrong-basic", "empty-bearer", "bad-basic", "unknown-scheme"],
)
async def test_missing_or_unknown_credentials_are_401_everywhere(
    keyed_app, client_for, method: str, path: str, role: DashboardRole, headers: dict[str, str]
) -> None:  # type: ignore[no-untyped-def]
    """With credentials configured, even loopback callers must authenticate: fixed 401 body."""
    response = await client_for(keyed_app, headers=headers).request(method, path)
    assert response.status_code == 401
    assert response.json() == UNAUTHENTICATED
    assert response.headers["www-authenticate"].startswith("Basic" if "/api/" not in path else "Bearer")


@pytest.mark.parametrize(("method", "path", "role"), ENDPOINTS, ids=ENDPOINT_IDS)
async def test_read_role_reads_but_cannot_operate(
    keyed_app, client_for, method: str, path: str, role: DashboardRole
) -> None:  # type: ignore[no-untyped-def]
    """A read key passes every GET and gets a fixed 403 on start, cancel and query."""
    response = await client_for(keyed_app, headers={"Authorization": f"Bearer {READ_KEY}"}).request(method, path)
    assert_forbidden_only_if(response, role is not DashboardRole.READ)


@pytest.mark.parametrize(("method", "path", "role"), ENDPOINTS, ids=ENDPOINT_IDS)
@pytest.mark.parametrize(
    "headers",
    [{"Authorization": f"Bearer {OPERATE_KEY}"}, {"X-API-Key": OPERATE_KEY}, {"Authorization": basic(OPERATE_KEY)}],
    ids=["bearer", "api-key", "basic"],
)
async def test_operate_role_may_do_everything_but_query(
    keyed_app, client_for, method: str, path: str, role: DashboardRole, headers: dict[str, str]
) -> None:  # type: ignore[no-untyped-def]
    """Operate implies read, not query; the key is accepted as bearer token, X-API-Key or Basic password."""
    response = await client_for(keyed_app, headers=headers).request(method, path)
    assert_forbidden_only_if(response, role is DashboardRole.QUERY)


@pytest.mark.parametrize(("method", "path", "role"), ENDPOINTS, ids=ENDPOINT_IDS)
async def test_query_role_reads_and_queries_but_cannot_operate(
    keyed_app, client_for, method: str, path: str, role: DashboardRole
) -> None:  # type: ignore[no-untyped-def]
    """Query implies read; it is not operate."""
    response = await client_for(keyed_app, headers={"X-API-Key": QUERY_KEY}).request(method, path)
    assert_forbidden_only_if(response, role is DashboardRole.OPERATE)


async def test_operate_key_starts_and_the_read_key_sees_it(keyed_app, client_for) -> None:  # type: ignore[no-untyped-def]
    """The roles gate real effects: start is 202 for operate, 403 for read."""
    operator = client_for(keyed_app, headers={"X-API-Key": OPERATE_KEY})
    viewer = client_for(keyed_app, headers={"X-API-Key": READ_KEY})
    assert (await viewer.post("/runiq/api/rag/indexes/slow/ingestion/start")).status_code == 403
    assert (await operator.post("/runiq/api/rag/indexes/slow/ingestion/start")).status_code == 202
    status = (await viewer.get("/runiq/api/rag/indexes/slow/status")).json()
    assert status["activeOperation"]["state"] == "running"
    assert (await viewer.post("/runiq/api/rag/indexes/slow/ingestion/cancel")).status_code == 403
    assert (await operator.post("/runiq/api/rag/indexes/slow/ingestion/cancel")).json()["state"] == "cancelled"


@pytest.mark.parametrize(("method", "path", "role"), ENDPOINTS, ids=ENDPOINT_IDS)
async def test_default_policy_allows_loopback_clients_all_but_query(
    api: httpx.AsyncClient, method: str, path: str, role: DashboardRole
) -> None:
    """Nothing configured: a loopback client may read and operate without credentials; querying is off."""
    response = await api.request(method, path)
    assert_forbidden_only_if(response, role is DashboardRole.QUERY)


@pytest.mark.parametrize(("method", "path", "role"), ENDPOINTS, ids=ENDPOINT_IDS)
async def test_loopback_clients_may_query_once_it_is_enabled(
    host: Host, client_for, method: str, path: str, role: DashboardRole
) -> None:  # type: ignore[no-untyped-def]
    """enable_query with the default policy: loopback clients hold every role."""
    response = await client_for(create_dashboard_app(host, DashboardOptions(enable_query=True))).request(method, path)
    assert response.status_code not in (401, 403)


@pytest.mark.parametrize(("method", "path", "role"), ENDPOINTS, ids=ENDPOINT_IDS)
@pytest.mark.parametrize(
    ("client", "base_url"),
    [
        (("203.0.113.7", 40000), "http://127.0.0.1"),  # a remote peer
        (("10.1.2.3", 40000), "http://127.0.0.1"),  # a private, still non-loopback peer
        (("::ffff:198.51.100.2", 40000), "http://127.0.0.1"),  # IPv4-mapped remote peer
        (("127.0.0.1", 40000), "http://rebound.example"),  # DNS rebinding: loopback peer, foreign Host
        (("127.0.0.1", 40000), "http://127.0.0.1.nip.example"),
    ],
    ids=["remote", "private", "mapped", "rebinding", "lookalike-host"],
)
async def test_default_policy_forbids_everyone_else(
    host: Host, client_for, method: str, path: str, role: DashboardRole, client, base_url: str
) -> None:  # type: ignore[no-untyped-def]
    """Non-loopback peers and non-loopback Host headers get the fixed 403, even with a key."""
    app = create_dashboard_app(host)
    response = await client_for(
        app, client=client, base_url=base_url, headers={"Authorization": f"Bearer {OPERATE_KEY}"}
    ).request(method, path)
    assert response.status_code == 403
    assert response.json() == FORBIDDEN


@pytest.mark.parametrize(
    ("client", "base_url"),
    [
        (("::1", 40000), "http://[::1]:8710"),
        (("127.0.0.5", 40000), "http://localhost:8710"),
        (("::ffff:127.0.0.1", 40000), "http://127.0.0.1:8710"),
    ],
    ids=["ipv6", "loopback-range", "mapped-loopback"],
)
async def test_default_policy_accepts_every_loopback_form(host: Host, client_for, client, base_url: str) -> None:  # type: ignore[no-untyped-def]
    """127.0.0.0/8, ::1 and IPv4-mapped loopback peers with loopback Host names are local."""
    response = await client_for(create_dashboard_app(host), client=client, base_url=base_url).get(
        "/runiq/api/rag/indexes"
    )
    assert response.status_code == 200


LOOPBACK_HOSTS = [
    "127.0.0.1",
    "127.0.0.1:8710",
    "127.0.0.5:1",
    "127.255.255.254:65535",
    "localhost",
    "LOCALHOST:8710",
    "localhost.",
    "localhost.:8710",
    "[::1]",
    "[::1]:8710",
    "[0:0:0:0:0:0:0:1]:80",
    "[::FFFF:127.0.0.1]:8710",
]
HOSTILE_HOSTS = [
    "[::1]evil.example",  # anything after "]" but ":port"
    "[::1].evil.example",
    "[::1]:8710evil.example",
    "127.0.0.1:abc",  # ports: digits, 1-65535, or absent
    "127.0.0.1:",
    "[::1]:",
    "127.0.0.1:0",
    "127.0.0.1:65536",
    "127.0.0.1:99999",
    "127.0.0.1:+80",
    "127.0.0.1:8710:8710",
    "localhost:abc",
    "::1",  # IPv6 literals only in brackets, well-formed, no zone, not IPvFuture, not IPv4
    "[::1",
    "::1]",
    "[[::1]]",
    "[::1%lo]",
    "[v1.fe]",
    "[127.0.0.1]",
    "[::2]",
    "[::ffff:10.0.0.1]",
    "user@127.0.0.1",  # userinfo
    "127.0.0.1@evil.example",
    "evil.example@localhost",
    "",  # empty, whitespace, several values
    " 127.0.0.1",
    "127.0.0.1 ",
    "127.0.0.1\t",
    "127.0.0.1 :8710",
    "local host",
    "127.0.0.1,127.0.0.1",
    "127.0.0.1, evil.example",
    "127.1",  # only canonical dotted-quad IPv4
    "2130706433",
    "0x7f.0.0.1",
    "0177.0.0.1",
    "127.0.0.1/",  # no path, query or fragment
    "127.0.0.1?x",
    "127.0.0.1#x",
    "localhost..",  # foreign or look-alike names
    "localhost.evil.example",
    "127.0.0.1.nip.example",
    "evil.example",
]


@pytest.mark.parametrize("value", LOOPBACK_HOSTS)
async def test_loopback_host_values_are_accepted(host: Host, client_for, value: str) -> None:  # type: ignore[no-untyped-def]
    """RFC 3986 host[:port] naming a loopback address or localhost, port 1-65535 or absent."""
    response = await client_for(create_dashboard_app(host)).get("/runiq/api/rag/indexes", headers={"Host": value})
    assert response.status_code == 200


@pytest.mark.parametrize("value", HOSTILE_HOSTS)
async def test_hostile_host_values_are_forbidden(host: Host, client_for, value: str) -> None:  # type: ignore[no-untyped-def]
    """A loopback peer with a malformed or foreign Host is refused: the Host is parsed strictly, not
    picked apart (``[::1]evil.example`` is not ``::1``)."""
    response = await client_for(create_dashboard_app(host)).get("/runiq/api/rag/indexes", headers={"Host": value})
    assert response.status_code == 403
    assert response.json() == FORBIDDEN


@pytest.mark.parametrize(
    "headers",
    [
        [("Host", "127.0.0.1"), ("Host", "127.0.0.1")],
        [("Host", "127.0.0.1"), ("Host", "evil.example")],
        [("Host", "\uff11\uff12\uff17.0.0.1".encode())],  # fullwidth digits
        [("Host", b"127.0.0.1\x00")],
    ],
    ids=["repeated", "second-foreign", "fullwidth", "nul"],
)
async def test_several_or_non_ascii_host_headers_are_forbidden(host: Host, client_for, headers) -> None:  # type: ignore[no-untyped-def]
    """Exactly one Host header, ASCII only."""
    response = await client_for(create_dashboard_app(host)).get("/runiq/api/rag/indexes", headers=headers)
    assert response.status_code == 403


@pytest.mark.parametrize(
    "headers",
    [{"Origin": "https://evil.example"}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"}],
    ids=["foreign-origin", "null-origin", "cross-site-fetch"],
)
@pytest.mark.parametrize("action", ["ingestion/start", "ingestion/cancel", "query"])
async def test_cross_site_commands_are_forbidden(host: Host, client_for, headers: dict[str, str], action: str) -> None:  # type: ignore[no-untyped-def]
    """A web page cannot make the user's browser start or cancel ingestion or read chunk text (CSRF)."""
    api = client_for(create_dashboard_app(host, DashboardOptions(enable_query=True)))
    body = {"text": "handbook", "mode": "lexical"}
    response = await api.post(f"/runiq/api/rag/indexes/docs/{action}", headers=headers, json=body)
    assert response.status_code == 403
    assert response.json() == FORBIDDEN


async def test_same_origin_and_trusted_origins_may_command(host: Host, client_for) -> None:  # type: ignore[no-untyped-def]
    """The page's own origin, and configured trusted origins, pass the origin check."""
    api = client_for(create_dashboard_app(host, DashboardOptions(trusted_origins=("https://ops.example",))))
    same = await api.post("/runiq/api/rag/indexes/docs/ingestion/start", headers={"Origin": "http://127.0.0.1"})
    assert same.status_code == 202
    trusted = await api.post("/runiq/api/rag/indexes/docs/ingestion/cancel", headers={"Origin": "https://ops.example"})
    assert trusted.status_code in (200, 409)


async def test_custom_access_policy_replaces_the_default(host: Host, client_for) -> None:  # type: ignore[no-untyped-def]
    """A host can plug its own policy (here: a trusted proxy header)."""

    class ProxyPolicy:
        async def authorize(self, request: Request, role: DashboardRole) -> AccessOutcome:
            user = request.headers.get("x-proxy-user")
            if user is None:
                return AccessOutcome.UNAUTHENTICATED
            if role is DashboardRole.OPERATE and user != "admin":
                return AccessOutcome.FORBIDDEN
            return AccessOutcome.ALLOWED

    app = create_dashboard_app(host, DashboardOptions(access_policy=ProxyPolicy()))
    remote = ("203.0.113.7", 40000)
    assert (await client_for(app, client=remote).get("/runiq/api/rag/indexes")).status_code == 401
    reader = client_for(app, client=remote, headers={"X-Proxy-User": "reader"})
    assert (await reader.get("/runiq/api/rag/indexes")).status_code == 200
    assert (await reader.post("/runiq/api/rag/indexes/docs/ingestion/start")).status_code == 403
    admin = client_for(app, client=remote, headers={"X-Proxy-User": "admin"})
    assert (await admin.post("/runiq/api/rag/indexes/docs/ingestion/start")).status_code == 202


async def test_a_failing_policy_is_a_fixed_500_without_its_text(host: Host, client_for) -> None:  # type: ignore[no-untyped-def]
    """Exceptions never reach a response: the body is fixed and the exception text is absent."""

    class BrokenPolicy:
        async def authorize(self, request: Request, role: DashboardRole) -> AccessOutcome:
            raise RuntimeError(f"policy backend said {CANARY}")

    app = create_dashboard_app(host, DashboardOptions(access_policy=BrokenPolicy()))
    response = await client_for(app, raise_app_exceptions=False).get("/runiq/api/rag/indexes")
    assert response.status_code == 500
    assert response.json() == {
        "code": "InternalError",
        "message": "The dashboard could not complete the request.",
        "activeOperation": None,
    }
    assert CANARY not in response.text


def test_credential_validation_never_echoes_the_secret() -> None:
    """Weak or malformed secrets are rejected; the error text does not contain them."""
    weak = "short-secret"
    with pytest.raises(ValidationError) as raised:
        DashboardCredential(name="ops", secret=weak)
    assert weak not in str(raised.value)
    assert weak not in repr(raised.value)
    credential = DashboardCredential(name="ops", secret=OPERATE_KEY)
    assert OPERATE_KEY not in repr(credential)
    assert OPERATE_KEY not in str(keyed_options())
    with pytest.raises(ValidationError):
        DashboardCredential(name="ops", secret=OPERATE_KEY, roles=frozenset())


def test_options_validation() -> None:
    """Base paths are normalised; duplicate names and credentials-plus-policy are rejected."""
    assert DashboardOptions().base_path == "/runiq"
    assert DashboardOptions(base_path=" /a//b/ ").base_path == "/a/b"
    for bad in ("/", "", "/../x", "/a b", "/x?y"):
        with pytest.raises(ValidationError):
            DashboardOptions(base_path=bad)
    twice = DashboardCredential(name="ops", secret=OPERATE_KEY)
    with pytest.raises(ValidationError):
        DashboardOptions(credentials=(twice, twice))
    with pytest.raises(ValidationError):
        DashboardOptions(access_policy=object())

    class Anyone:
        async def authorize(self, request: Request, role: DashboardRole) -> AccessOutcome:
            return AccessOutcome.ALLOWED

    with pytest.raises(ValidationError):
        DashboardOptions(credentials=(twice,), access_policy=Anyone())
    with pytest.raises(ValidationError):
        DashboardOptions(trusted_origins=("https://ops.example/path",))


@pytest.mark.parametrize(
    ("headers", "roles"),
    [
        ({"X-API-Key": READ_KEY}, ["read"]),
        ({"X-API-Key": OPERATE_KEY}, ["read", "operate"]),
        ({"Authorization": basic(QUERY_KEY)}, ["read", "query"]),
    ],
    ids=["read", "operate", "query"],
)
async def test_access_endpoint_names_the_roles_of_the_key(keyed_app, client_for, headers, roles) -> None:  # type: ignore[no-untyped-def]
    """The page learns what to offer; asking logs no denial (it is not one)."""
    with structlog.testing.capture_logs() as events:
        response = await client_for(keyed_app, headers=headers).get("/runiq/api/access")
    assert response.status_code == 200
    assert response.json() == {"roles": roles}
    assert [e for e in events if e["event"] == "dashboard.access_denied"] == []


@pytest.mark.parametrize(
    ("enable_query", "roles"), [(False, ["read", "operate"]), (True, ["read", "operate", "query"])]
)
async def test_access_endpoint_for_loopback_clients(host: Host, client_for, enable_query: bool, roles) -> None:  # type: ignore[no-untyped-def]
    """The default policy grants loopback clients operate, and query only once it is enabled."""
    app = create_dashboard_app(host, DashboardOptions(enable_query=enable_query))
    assert (await client_for(app).get("/runiq/api/access")).json() == {"roles": roles}


async def test_a_refused_query_is_refused_before_its_body_is_read(host: Host, keyed_app, client_for) -> None:  # type: ignore[no-untyped-def]
    """A body past the 256 KiB cap is 413 only for a caller that may query: others get 401/403 first."""
    big = {"text": "x" * 300_000}
    path = "/runiq/api/rag/indexes/docs/query"
    assert (await client_for(keyed_app).post(path, json=big)).status_code == 401
    assert (await client_for(keyed_app, headers={"X-API-Key": OPERATE_KEY}).post(path, json=big)).status_code == 403
    assert (await client_for(create_dashboard_app(host)).post(path, json=big)).status_code == 403
    assert (await client_for(keyed_app, headers={"X-API-Key": QUERY_KEY}).post(path, json=big)).status_code == 413


async def test_query_denials_are_logged_without_the_query(host: Host, keyed_app, client_for) -> None:  # type: ignore[no-untyped-def]
    """Disabled querying and a missing role are logged as outcomes, with the credential's name only."""
    body = {"text": f"what about {CANARY}", "mode": "lexical"}
    path = "/runiq/api/rag/indexes/docs/query"
    with structlog.testing.capture_logs() as events:
        await client_for(keyed_app, headers={"X-API-Key": READ_KEY}).post(path, json=body)
        await client_for(create_dashboard_app(host)).post(path, json=body)
    denials = [
        (e.get("credential"), e["role"], e["outcome"]) for e in events if e["event"] == "dashboard.access_denied"
    ]
    assert denials == [("viewer", "query", "missing_role"), (None, "query", "query_disabled")]
    assert CANARY not in repr(events)


def test_a_query_credential_needs_querying_enabled() -> None:
    """Querying is off unless configured: a key holding the query role without enable_query is rejected."""
    searcher = DashboardCredential(name="searcher", secret=QUERY_KEY, roles=frozenset({DashboardRole.QUERY}))
    with pytest.raises(ValidationError, match="enable_query"):
        DashboardOptions(credentials=(searcher,))
    assert DashboardOptions(credentials=(searcher,), enable_query=True).enable_query


async def test_a_custom_policy_is_asked_for_the_query_role(host: Host, client_for) -> None:  # type: ignore[no-untyped-def]
    """The role a custom policy is asked about is 'query' for the query route, whatever its method."""
    asked: list[DashboardRole] = []

    class ProxyPolicy:
        async def authorize(self, request: Request, role: DashboardRole) -> AccessOutcome:
            asked.append(role)
            user = request.headers.get("x-proxy-user")
            return (
                AccessOutcome.ALLOWED
                if role is not DashboardRole.QUERY or user == "searcher"
                else AccessOutcome.FORBIDDEN
            )

    app = create_dashboard_app(host, DashboardOptions(access_policy=ProxyPolicy(), enable_query=True))
    await host.services.get(RagIngestionManager).run("docs")
    body = {"text": "handbook", "mode": "lexical"}
    path = "/runiq/api/rag/indexes/docs/query"
    assert (await client_for(app, headers={"X-Proxy-User": "admin"}).post(path, json=body)).status_code == 403
    assert (await client_for(app, headers={"X-Proxy-User": "searcher"}).post(path, json=body)).status_code == 200
    assert asked == [DashboardRole.QUERY, DashboardRole.QUERY]
    roles = (await client_for(app, headers={"X-Proxy-User": "searcher"}).get("/runiq/api/access")).json()["roles"]
    assert roles == ["read", "operate", "query"]
