"""Where a provider's secret comes from, and the rules that keep secrets out of provider options.

Options of a remote provider hold where to find its API key, never the key: a :class:`SecretProvider`
(an application with a vault implements the protocol itself) or the name of an environment variable
(:data:`EnvVarName`, read by :class:`EnvironmentSecretProvider`). The key is read when the provider
needs it, not at registration. A remote endpoint is an :data:`HttpBaseUrl`: http(s), with a host, and
no ``user:password@``, query or fragment, so options, instance keys and logs can hold it safely.

    class MyOptions(BaseModel):
        base_url: HttpBaseUrl | None = None
        api_key_env: EnvVarName = "MY_API_KEY"
        secret_provider: SecretProvider | None = None
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Annotated, Protocol, runtime_checkable
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, SecretStr

from runiq.errors import RagConfigurationError

__all__ = [
    "ENV_VAR_PATTERN",
    "EnvVarName",
    "EnvironmentSecretProvider",
    "HttpBaseUrl",
    "SecretProvider",
    "check_http_base_url",
    "require_secret",
]

ENV_VAR_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"


@runtime_checkable
class SecretProvider(Protocol):
    """Supplies one secret on demand.

    ``str()`` of a provider is part of the key that decides which indexes share one live client, so
    it must identify the secret's source (never reveal the secret): two providers with the same
    ``str()`` must yield the same secret.
    """

    @property
    def source(self) -> str:
        """Where the secret comes from, for error messages (``"environment variable 'X'"``)."""
        ...

    async def get_secret(self) -> SecretStr | None:
        """The secret, or ``None`` when it is not configured."""
        ...


@dataclass(frozen=True, slots=True)
class EnvironmentSecretProvider:
    """Reads the secret from an environment variable each time it is asked (empty counts as unset)."""

    variable: str

    def __post_init__(self) -> None:
        if not isinstance(self.variable, str) or not re.match(ENV_VAR_PATTERN, self.variable):
            raise RagConfigurationError("An environment variable name must be letters, digits and '_'.")

    @property
    def source(self) -> str:
        return f"environment variable '{self.variable}'"

    async def get_secret(self) -> SecretStr | None:
        value = os.environ.get(self.variable, "").strip()
        return SecretStr(value) if value else None


async def require_secret(source: SecretProvider, *, needed_by: str) -> SecretStr:
    """The secret ``source`` holds.

    Raises:
        RagConfigurationError: ``source`` has none; the message names ``needed_by`` and the source,
            never a value (``"The cohere reranker needs an API key; none is set in the environment
            variable 'CO_API_KEY'."``).
    """
    secret = await source.get_secret()
    if secret is None:
        raise RagConfigurationError(f"{needed_by} needs an API key; none is set in the {source.source}.")
    return secret


def check_http_base_url(value: str) -> str:
    """``value`` unchanged if it is an http(s) URL with a host and no credentials, query or fragment.

    Raises:
        ValueError: a message naming the rule, never quoting the URL (for a pydantic validator).
    """
    try:
        parts = urlsplit(value)
        has_credentials = parts.username is not None or parts.password is not None
    except ValueError:
        raise ValueError("base_url is not a URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("base_url must be an http(s) URL")
    if has_credentials:
        raise ValueError("base_url must not embed credentials")
    if parts.query or parts.fragment:
        raise ValueError("base_url must not carry a query or fragment")
    return value


EnvVarName = Annotated[str, Field(pattern=ENV_VAR_PATTERN)]
"""The name of an environment variable, as an options field (letters, digits and ``_``)."""

HttpBaseUrl = Annotated[str, AfterValidator(check_http_base_url)]
"""A remote provider's address, as an options field (see :func:`check_http_base_url`)."""
