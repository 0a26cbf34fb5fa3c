"""The access policy, enforced on every dashboard route (page, assets, API, OpenAPI) by one dependency.

The role a request needs follows from its method: ``GET``/``HEAD`` need ``read``, anything else
(start, cancel) needs ``operate``. A policy answers ALLOWED, UNAUTHENTICATED (401) or FORBIDDEN (403);
the dependency turns the last two into fixed problem documents. Unsafe requests additionally must not
come from a foreign browser origin, because browsers attach HTTP Basic credentials (and reach
loopback servers) on their own: without that check any web page could start ingestions.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import Protocol, runtime_checkable

import structlog
from fastapi import Request

from runiq_dashboard.loopback import is_loopback_address, is_loopback_host
from runiq_dashboard.options import DashboardCredential, DashboardOptions, DashboardRole
from runiq_dashboard.problems import ProblemError, forbidden, unauthenticated

__all__ = [
    "AccessOutcome",
    "AccessPolicy",
    "CredentialAccessPolicy",
    "LoopbackAccessPolicy",
    "access_dependency",
    "policy_for",
    "required_role",
]

log = structlog.get_logger(__name__)

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class AccessOutcome(StrEnum):
    ALLOWED = "allowed"
    UNAUTHENTICATED = "unauthenticated"  # no credentials, or credentials nobody issued -> 401
    FORBIDDEN = "forbidden"  # known caller without the role, or a client the policy refuses -> 403


@runtime_checkable
class AccessPolicy(Protocol):
    """Decides whether a request may use the dashboard with ``role``. Must not raise."""

    async def authorize(self, request: Request, role: DashboardRole) -> AccessOutcome: ...


def required_role(method: str) -> DashboardRole:
    return DashboardRole.READ if method.upper() in _SAFE_METHODS else DashboardRole.OPERATE


def _grants(roles: frozenset[DashboardRole], role: DashboardRole) -> bool:
    return role in roles or DashboardRole.OPERATE in roles


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
        presented = _presented_secret(request)
        if presented is None:
            return AccessOutcome.UNAUTHENTICATED
        digest = hashlib.sha256(presented).digest()
        matched: DashboardCredential | None = None
        for expected, credential in self._credentials:
            if hmac.compare_digest(digest, expected):
                matched = credential
        if matched is None:
            return AccessOutcome.UNAUTHENTICATED
        if not _grants(matched.roles, role):
            log.info("dashboard.access_denied", credential=matched.name, role=role.value, outcome="missing_role")
            return AccessOutcome.FORBIDDEN
        return AccessOutcome.ALLOWED


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


def access_dependency(options: DashboardOptions) -> Callable[[Request], Awaitable[None]]:
    """The one dependency attached to the dashboard's router: every route passes through it."""
    policy = policy_for(options)
    trusted = options.trusted_origins

    async def enforce_access(request: Request) -> None:
        role = required_role(request.method)
        outcome = await policy.authorize(request, role)
        if outcome is AccessOutcome.UNAUTHENTICATED:
            raise ProblemError(unauthenticated(browser=_is_page(request, options.base_path)))
        if outcome is not AccessOutcome.ALLOWED:
            raise ProblemError(forbidden())
        if role is DashboardRole.OPERATE and not _same_origin(request, trusted):
            log.info("dashboard.access_denied", role=role.value, outcome="cross_origin")
            raise ProblemError(forbidden())

    return enforce_access


def _is_page(request: Request, base_path: str) -> bool:
    return not request.url.path.startswith(f"{base_path}/api/")
