"""Translate backend failures into runiq's error tree at the adapter edge, content-free.

asyncpg errors carry the server's ``DETAIL`` text, which can echo row values (chunk content,
metadata, document ids); OS errors can name socket paths. Neither may reach a runiq error, so the
mapped error keeps only the SQLSTATE and is raised *outside* the ``except`` block: it has no
``__cause__`` and no ``__context__``, and the original exception is not kept alive.
"""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

import asyncpg

from runiq.errors import RagError, VectorStoreUnavailableError

__all__ = ["STORE_KIND", "ExtensionMissingError", "guarded", "mapped"]

STORE_KIND = "postgresql"

P = ParamSpec("P")
T = TypeVar("T")

_UNAVAILABLE = (
    asyncpg.InterfaceError,
    asyncpg.exceptions.InternalClientError,
    OSError,
    TimeoutError,
    subprocess.SubprocessError,
    EOFError,
)


async def guarded(awaitable: Awaitable[T]) -> T:
    """Await ``awaitable``; a database or connection failure becomes ``VectorStoreUnavailableError``."""
    sqlstate: str | None = None
    try:
        return await awaitable
    except RagError:
        raise
    except asyncpg.PostgresError as exc:
        sqlstate = _sqlstate(exc)
    except _UNAVAILABLE:
        pass
    raise VectorStoreUnavailableError(STORE_KIND, sqlstate) from None


def mapped(method: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """Decorate a store coroutine method so every failure leaving it is mapped by :func:`guarded`."""

    @functools.wraps(method)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        return await guarded(method(*args, **kwargs))

    return wrapper


def _sqlstate(exc: asyncpg.PostgresError) -> str | None:
    code = getattr(exc, "sqlstate", None)
    # SQLSTATEs are five characters of [0-9A-Z]; anything else is not ours to repeat.
    if isinstance(code, str) and len(code) == 5 and code.isalnum():
        return code
    return None


class ExtensionMissingError(VectorStoreUnavailableError):
    """A required extension (``vector``, ``pg_trgm``) is absent and the role may not create it."""

    def __init__(self, extension: str, sqlstate: str | None = None) -> None:
        super().__init__(STORE_KIND, sqlstate)
        self.extension = extension
        self.message = (
            f"The PostgreSQL extension '{extension}' is not installed and could not be created"
            f"{f' (SQLSTATE {sqlstate})' if sqlstate else ''}; run CREATE EXTENSION {extension} as a privileged "
            "role, or grant this role the right to create it."
        )
        self.args = (self.message,)
