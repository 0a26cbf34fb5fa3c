"""The access policy, enforced on every dashboard route (page, assets, API, OpenAPI) by one dependency.

The role a request needs follows from its route, else its method: the query route needs ``query``
(:data:`ROUTE_ROLES`); otherwise ``GET``/``HEAD`` need ``read`` and anything else (start, cancel) needs
``operate``. A policy answers ALLOWED, UNAUTHENTICATED (401) or FORBIDDEN (403); the dependency turns
the last two into fixed problem documents, and refuses ``query`` with 403 while querying is off.
Unsafe requests additionally must not come from a foreign browser origin, because browsers attach
HTTP Basic credentials (and reach loopback servers) on their own: without that check any web page
could start ingestions or read chunk text.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import Protocol, runtime_checkable

from fastapi import Request

from runiq.logging import get_logger
from runiq_dashboard.loopback import is_loopback_address, is_loopback_host
from runiq_dashboard.options import DashboardCredential, DashboardOptions, DashboardRole
from runiq_dashboard.problems import ProblemError, forbidden, unauthenticated

__all__ = [
    "AccessOutcome",
    "AccessPolicy",
    "CredentialAccessPolicy",
    "LoopbackAccessPolicy",
    "ROUTE_ROLES",
    "access_dependency",
    "granted_roles",
    "policy_for",
    "required_role",
]

log = get_logger(__name__)

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
QUERY_ROUTE = "rag_query"
# Routes whose role is not the one their method implies, by route name.
ROUTE_ROLES: dict[str, DashboardRole] = {QUERY_ROUTE: DashboardRole.QUERY}


class AccessOutcome(StrEnum):
    ALLOWED = "allowed"
    UNAUTHENTICATED = "unauthenticated"  # no credentials, or credentials nobody issued -> 401
    FORBIDDEN = "forbidden"  # known caller without the role, or a client the policy refuses -> 403


@runtime_checkable
class AccessPolicy(Protocol):
    """Decides whether a request may use the dashboard with ``role``. Must not raise."""

    async def authorize(self, request: Request, role: DashboardRole) -> AccessOutcome: ...


def required_role(method: str, route_name: str | None = None) -> DashboardRole:
    """The role a request needs: its route's (:data:`ROUTE_ROLES`), else ``read`` for safe methods and
    ``operate`` for the others. Routing's own 404/405 answers have no route: their method decides."""
    if route_name is not None and route_name in ROUTE_ROLES:
        return ROUTE_ROLES[route_name]
    return DashboardRole.READ if method.upper() in _SAFE_METHODS else DashboardRole.OPERATE


def _route_name(request: Request) -> str | None:
    """The name of the route that will answer, or None. A 405 still has the path's route in its scope,
    but no route answers it: its method decides the role, as for a 404."""
    route = request.scope.get("route")
    methods = getattr(route, "methods", None) or ()
    if request.method not in methods:
        return None
    name = getattr(route, "name", None)
    return name if isinstance(name, str) else None


def _grants(roles: frozenset[DashboardRole], role: DashboardRole) -> bool:
    """Every role implies ``read``; ``operate`` and ``query`` imply nothing else."""
    return role is DashboardRole.READ or role in roles


class CredentialAccessPolicy:
    """API keys / bearer tokens. Secrets are compared as SHA-256 digests with ``hmac.compare_digest``
    against every configured credential (no early exit), so timing reveals neither length nor which
    credential matched."""

    def __init__(self, credentials: tuple[DashboardCredential, ...]) -> None:
        if not credentials:
            raise ValueError("CredentialAccessPolicy needs at least one credential")
        self._credentials = tuple(
            (hashlib.sha256(c.secret.get_secret_value().encode("utf-8")).digest(), c) for c in credentials
        )

    async def authorize(self, request: Request, role: DashboardRole) -> AccessOutcome:
        matched = self.credential_of(request)
        if matched is None:
            return AccessOutcome.UNAUTHENTICATED
        if not _grants(matched.roles, role):
            log.info("dashboard.access_denied", credential=matched.name, role=role.value, outcome="missing_role")
            return AccessOutcome.FORBIDDEN
        return AccessOutcome.ALLOWED

    def credential_of(self, request: Request) -> DashboardCredential | None:
        """The configured credential the request presents, or None (nothing, or a key nobody issued)."""
        presented = _presented_secret(request)
        if presented is None:
            return None
        digest = hashlib.sha256(presented).digest()
        matched: DashboardCredential | None = None
        for expected, credential in self._credentials:
            if hmac.compare_digest(digest, expected):
                matched = credential
        return matched


def _presented_secret(request: Request) -> bytes | None:
    authorization = request.headers.get("authorization")
    if authorization:
        scheme, _, value = authorization.strip().partition(" ")
        value = value.strip()
        if scheme.lower() == "bearer" and value:
            return value.encode("utf-8")
        if scheme.lower() == "basic" and value:
            return _basic_password(value)
        return None
    api_key = request.headers.get("x-api-key")
    return api_key.strip().encode("utf-8") if api_key and api_key.strip() else None


def _basic_password(value: str) -> bytes | None:
    try:
        decoded = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    _, separator, password = decoded.partition(b":")
    return password if separator and password else None


class LoopbackAccessPolicy:
    """The default when nothing is configured: loopback clients may read and operate, nobody else may.

    The TCP peer must be a loopback address and the one ``Host`` header a well-formed loopback name or
    address (:mod:`runiq_dashboard.loopback`); the second check stops DNS-rebinding pages from
    reaching the dashboard through the user's browser.
    """

    async def authorize(self, request: Request, role: DashboardRole) -> AccessOutcome:
        client = request.client.host if request.client is not None else None
        if not is_loopback_address(client):
            log.info("dashboard.access_denied", role=role.value, outcome="not_loopback_client")
            return AccessOutcome.FORBIDDEN
        if not is_loopback_host(request.headers.getlist("host")):
            log.info("dashboard.access_denied", role=role.value, outcome="not_loopback_host")
            return AccessOutcome.FORBIDDEN
        return AccessOutcome.ALLOWED


def policy_for(options: DashboardOptions) -> AccessPolicy:
    if options.access_policy is not None:
        policy: AccessPolicy = options.access_policy
        return policy
    if options.credentials:
        return CredentialAccessPolicy(options.credentials)
    return LoopbackAccessPolicy()


def _same_origin(request: Request, trusted: tuple[str, ...]) -> bool:
    origin = request.headers.get("origin")
    if origin is None:
        # Browsers always send Origin on cross-site unsafe requests; Sec-Fetch-Site covers old ones.
        return request.headers.get("sec-fetch-site", "same-origin") in ("same-origin", "none")
    origin = origin.strip().lower()
    host = request.headers.get("host", "").strip().lower()
    return origin in trusted or origin in (f"http://{host}", f"https://{host}")


def access_dependency(
    options: DashboardOptions, policy: AccessPolicy | None = None
) -> Callable[[Request], Awaitable[None]]:
    """The one dependency attached to the dashboard's router: every route passes through it.
    ``policy``: the one :func:`policy_for` made for ``options``, when the caller keeps it too."""
    policy = policy if policy is not None else policy_for(options)
    trusted = options.trusted_origins

    async def enforce_access(request: Request) -> None:
        role = required_role(request.method, _route_name(request))
        outcome = await policy.authorize(request, role)
        if outcome is AccessOutcome.UNAUTHENTICATED:
            raise ProblemError(unauthenticated(browser=_is_page(request, options.base_path)))
        if outcome is not AccessOutcome.ALLOWED:
            raise ProblemError(forbidden())
        if role is DashboardRole.QUERY and not options.enable_query:
            log.info("dashboard.access_denied", role=role.value, outcome="query_disabled")
            raise ProblemError(forbidden())
        if role is not DashboardRole.READ and not _same_origin(request, trusted):
            log.info("dashboard.access_denied", role=role.value, outcome="cross_origin")
            raise ProblemError(forbidden())

    return enforce_access


async def granted_roles(policy: AccessPolicy, request: Request, options: DashboardOptions) -> list[DashboardRole]:
    """What the caller of an allowed ``read`` request may also do, for the page to offer only that.

    The built-in credential policy answers from the matched credential without logging denials; any
    other policy is asked for each role (``query`` only while querying is on).
    """
    wanted = [DashboardRole.OPERATE] + ([DashboardRole.QUERY] if options.enable_query else [])
    if isinstance(policy, CredentialAccessPolicy):
        credential = policy.credential_of(request)
        held = credential.roles if credential is not None else frozenset()
        return [DashboardRole.READ, *(role for role in wanted if role in held)]
    allowed = [role for role in wanted if await policy.authorize(request, role) is AccessOutcome.ALLOWED]
    return [DashboardRole.READ, *allowed]


def _is_page(request: Request, base_path: str) -> bool:
    return not request.url.path.startswith(f"{base_path}/api/")
