"""Dashboard options: base path, title and the access configuration.

Options are immutable and validated on construction. Credentials hold their secret as ``SecretStr``,
so ``repr()``, logs and error messages show ``'**********'``; validation messages name fields, never
values.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["DEFAULT_BASE_PATH", "DashboardCredential", "DashboardOptions", "DashboardRole"]

DEFAULT_BASE_PATH = "/runiq"
MIN_SECRET_LENGTH = 16
_SEGMENT = re.compile(r"^[A-Za-z0-9._~-]+$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_ORIGIN = re.compile(r"^https?://[A-Za-z0-9.\-\[\]:]+$")


class DashboardRole(StrEnum):
    READ = "read"  # GET and HEAD: the page, index metadata, status, run history, failed documents' codes
    OPERATE = "operate"  # start and cancel ingestion; implies READ
    QUERY = "query"  # the query endpoint and playground: chunk text and document ids leave the server; implies READ


class DashboardCredential(BaseModel):
    """One API key or bearer token. Send it as ``Authorization: Bearer <secret>``, ``X-API-Key: <secret>``
    or, from a browser, as the password of HTTP Basic authentication (any user name)."""

    # Secrets are the input of these models: keep input values out of ValidationError messages.
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    name: str = Field(description="A label for the credential (logged on denial; never the secret).")
    secret: SecretStr
    roles: frozenset[DashboardRole] = frozenset({DashboardRole.READ})

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError("credential names are 1-64 letters, digits, '.', '_' or '-'")
        return value

    @field_validator("secret")
    @classmethod
    def _check_secret(cls, value: SecretStr) -> SecretStr:
        secret = value.get_secret_value()
        if len(secret) < MIN_SECRET_LENGTH or secret != secret.strip() or not secret.isprintable():
            raise ValueError(f"secrets must be at least {MIN_SECRET_LENGTH} printable characters without edge spaces")
        return value

    @field_validator("roles")
    @classmethod
    def _check_roles(cls, value: frozenset[DashboardRole]) -> frozenset[DashboardRole]:
        if not value:
            raise ValueError("a credential needs at least one role")
        return value


class DashboardOptions(BaseModel):
    """How the dashboard is mounted and who may use it.

    Access, in order of precedence:

    - ``access_policy``: a custom :class:`~runiq_dashboard.access.AccessPolicy` (for example one that
      trusts an authenticating reverse proxy);
    - ``credentials``: API keys / bearer tokens with ``read`` and ``operate`` roles; every request,
      also from loopback, must present one;
    - nothing configured: **loopback clients only**. Requests whose TCP peer is not a loopback address,
      or whose ``Host`` header is not a loopback name (a DNS-rebinding guard), are refused with 403;
      loopback clients may read and operate. Behind a reverse proxy on the same machine every request
      looks local, so configure credentials there.

    Querying (``POST .../query`` and the page's playground) returns chunk text and document ids: it is
    off unless ``enable_query`` is set, and then needs the ``query`` role (loopback clients of the
    default policy have it). A credential with the ``query`` role while querying is off is rejected.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True, hide_input_in_errors=True)

    base_path: str = DEFAULT_BASE_PATH
    title: str = Field(default="Runiq Dashboard", min_length=1, max_length=120)
    credentials: tuple[DashboardCredential, ...] = ()
    trusted_origins: tuple[str, ...] = Field(
        default=(),
        description="Extra browser origins (scheme://host[:port]) allowed to send start/cancel requests.",
    )
    enable_query: bool = Field(
        default=False,
        description="Serve POST {base}/api/rag/indexes/{name}/query and the page's playground (content egress).",
    )
    query_rate_limit: int = Field(
        default=60,
        ge=1,
        le=100_000,
        description="Queries per minute the dashboard answers, all callers together (a token bucket of this size).",
    )
    access_policy: Any = Field(default=None, exclude=True, repr=False)

    @field_validator("base_path")
    @classmethod
    def _normalise_base_path(cls, value: str) -> str:
        segments = [s for s in value.strip().split("/") if s]
        if not segments or not all(_SEGMENT.match(s) and s not in (".", "..") for s in segments):
            raise ValueError("the base path needs at least one segment of letters, digits, '.', '_', '~' or '-'")
        return "/" + "/".join(segments)

    @field_validator("trusted_origins")
    @classmethod
    def _check_origins(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not all(_ORIGIN.match(origin) for origin in value):
            raise ValueError("trusted origins look like 'https://dashboard.example.com' (no path)")
        return tuple(origin.lower() for origin in value)

    @model_validator(mode="after")
    def _check_access(self) -> DashboardOptions:
        from runiq_dashboard.access import AccessPolicy

        names = [c.name for c in self.credentials]
        if len(set(names)) != len(names):
            raise ValueError("credential names must be unique")
        if not self.enable_query and any(DashboardRole.QUERY in c.roles for c in self.credentials):
            raise ValueError("a credential has the query role but enable_query is off: turn it on or drop the role")
        if self.access_policy is not None:
            if not isinstance(self.access_policy, AccessPolicy):
                raise ValueError("access_policy must implement AccessPolicy (async authorize(request, role))")
            if self.credentials:
                raise ValueError("configure either credentials or a custom access_policy, not both")
        return self

    @classmethod
    def from_environment(cls) -> DashboardOptions:
        """Read ``RUNIQ_DASHBOARD__BASE_PATH``, ``__TITLE``, ``__CREDENTIALS`` (JSON list),
        ``__TRUSTED_ORIGINS`` (JSON list), ``__ENABLE_QUERY`` and ``__QUERY_RATE_LIMIT``."""
        return cls.model_validate(_EnvironmentOptions().model_dump(exclude_unset=True))


class _EnvironmentOptions(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RUNIQ_DASHBOARD__", frozen=True, extra="ignore", hide_input_in_errors=True
    )

    base_path: str = DEFAULT_BASE_PATH
    title: str = "Runiq Dashboard"
    credentials: tuple[DashboardCredential, ...] = ()
    trusted_origins: tuple[str, ...] = ()
    enable_query: bool = False
    query_rate_limit: int = 60
