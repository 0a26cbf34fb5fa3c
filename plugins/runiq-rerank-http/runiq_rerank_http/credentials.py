"""Where the API key comes from, and the ``Authorization`` header built from it.

The same shape as runiq-openai's: a :class:`SecretProvider` yields a :class:`~pydantic.SecretStr`
(or ``None`` when nothing is configured) and describes its source in words that are safe to put in an
error message. The default reads one environment variable; an application with a vault implements
the protocol itself.

The key is read on the first rerank call, not at registration and not when the host opens the index:
the index's resources (store, embedder, reranker) open together, so a missing reranker key read on open
would fail ingestion and retrieval too. Read lazily, it fails only the reranking step, which the
context policy's failure policy then handles (fall back to retrieval order, or fail).
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pydantic import SecretStr
from runiq.rag import RagConfigurationError

__all__ = ["ENV_VAR_PATTERN", "BearerCredentials", "EnvironmentSecretProvider", "SecretProvider"]

ENV_VAR_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"


@runtime_checkable
class SecretProvider(Protocol):
    """Supplies one secret on demand; ``str()`` identifies its source and never reveals the secret."""

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


class BearerCredentials:
    """``Authorization: Bearer <key>`` from ``source``, read once on first use (``None``: send no key).

    Until a key is found, every call asks the source again, so setting it fixes a running host.
    """

    def __init__(self, source: SecretProvider | None, *, label: str) -> None:
        self._source = source
        self._label = label
        self._secret: SecretStr | None = None
        self._lock = asyncio.Lock()

    async def headers(self) -> dict[str, str]:
        """The header to send.

        Raises:
            RagConfigurationError: a key is expected and its source has none (the message names the
                source, never a value).
        """
        if self._source is None:
            return {}
        if self._secret is None:
            async with self._lock:
                if self._secret is None:
                    self._secret = await self._source.get_secret()
        if self._secret is None:
            raise RagConfigurationError(
                f"The {self._label} needs an API key; none is set in the {self._source.source}."
            )
        return {"Authorization": f"Bearer {self._secret.get_secret_value()}"}
