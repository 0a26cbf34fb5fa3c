"""Where the API key comes from. The key is read when the client opens, never at registration.

A :class:`SecretProvider` yields a :class:`~pydantic.SecretStr` (or ``None`` when nothing is
configured) and describes its source in words that are safe to put in an error message. The default
reads one environment variable; an application with a vault implements the protocol itself.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pydantic import SecretStr
from runiq.rag import RagConfigurationError

__all__ = ["ENV_VAR_PATTERN", "EnvironmentSecretProvider", "SecretProvider"]

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
