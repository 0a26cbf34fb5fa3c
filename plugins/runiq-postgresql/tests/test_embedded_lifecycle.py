"""The embedded server across real processes: the last live user stops it, however the others ended.

Every test shares one data directory (initdb once) and starts and ends with no server running on it.
The configuration file sits next to that directory and names it relatively (``data_dir = "data"``);
commands run from another working directory, so they find it only if it resolves next to the file.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
import runiq_dashboard

import runiq
import runiq_postgresql
from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore, embedded

DEADLINE = 90.0  # seconds for a child to get ready or to exit; generous for a loaded 2-core machine

STORE_CHILD = """
import asyncio, sys
from pathlib import Path
from runiq.rag.providers import IndexSpec
from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore

async def main(data_dir: str, close: bool) -> None:
    options = PostgresStoreOptions(data_dir=Path(data_dir), schema="lifecycle", tokenising_process=False)
    store = PostgresVectorStore(options)
    await store.open()
    await store.ensure_index(IndexSpec(name="docs", dimensions=None))
    print("ready", flush=True)
    while await asyncio.to_thread(sys.stdin.readline):  # each line asks for a round trip; EOF ends
        print("count", await store.count("docs"), flush=True)
    if close:
        await store.close()

asyncio.run(main(sys.argv[1], close=sys.argv[2] == "close"))
"""

# `runiq ingest`, except that after ingesting it waits (stores open) instead of returning.
INGEST_CHILD = """
import asyncio, sys
from runiq.cli import commands, main as cli
from runiq.rag import RagIngestionManager

async def ingest_then_wait(host, name, console):
    operation = await host.services.get(RagIngestionManager).run(name)
    print("ready", operation.state.value, flush=True)
    await asyncio.Event().wait()

commands._ingest_with_progress = ingest_then_wait
cli.app(sys.argv[1:], prog_name="runiq")
"""

SERVE_CHILD = "from runiq.cli.main import app; import sys; app(sys.argv[1:], prog_name='runiq')"

CONFIG = """
[rag.indexes.docs]
default_mode = "lexical"
sources = [{ path = "docs", pattern = "*.md" }]

[rag.indexes.docs.vector_store]
provider = "postgresql"
options = { data_dir = "data", schema = "lifecycle_cli", tokenising_process = false }

[rag.indexes.docs.ingestion]
strategy = "on_startup"
"""


@pytest.fixture(scope="module")
def root() -> Iterator[Path]:
    """``runiq.toml``, ``docs/`` and the shared ``data/`` directory (not pytest's tmp_path: see conftest)."""
    path = Path(tempfile.mkdtemp(prefix="runiq-pg-life-"))
    (path / "docs").mkdir()
    (path / "docs" / "a.md").write_text("CS1503 build error", encoding="utf-8")
    (path / "runiq.toml").write_text(CONFIG, encoding="utf-8")
    (path / "elsewhere").mkdir()
    yield path
    _stop_leftover(path / "data")
    _stop_leftover(path / "elsewhere" / "data")  # where a working-directory-relative data_dir would be
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def data_dir(root: Path) -> Iterator[Path]:
    data = root / "data"
    assert _postmaster(data) is None
    yield data
    _stop_leftover(data)  # a failed test must not leave a server behind for the next one


def _postmaster(data_dir: Path) -> psutil.Process | None:
    """The live postmaster of ``data_dir``, if any (the pid file is removed by a clean stop)."""
    try:
        pid = int((data_dir / "postmaster.pid").read_text().split()[0])
        process = psutil.Process(pid)
        alive = process.name() == "postgres" and process.status() != psutil.STATUS_ZOMBIE
    except (FileNotFoundError, IndexError, ValueError, psutil.Error):
        return None
    return process if alive else None


def _stop_leftover(data_dir: Path) -> None:
    process = _postmaster(data_dir)
    if process is not None:
        process.send_signal(signal.SIGINT)  # PostgreSQL's fast shutdown
        process.wait(timeout=DEADLINE)


def _env() -> dict[str, str]:
    """Children import this checkout's runiq and plugins, like the test process."""
    paths = [str(Path(module.__file__ or "").parents[1]) for module in (runiq, runiq_postgresql, runiq_dashboard)]
    inherited = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths + ([inherited] if inherited else []))}


class Child:
    """A child process whose output lines arrive on a queue, so waiting for one has a deadline."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, *args],
            cwd=cwd,
            env=_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.output: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)
            self.lines.put(line)
        self.lines.put("")  # end of output: waiting longer is pointless

    def wait_for(self, text: str) -> str:
        deadline = time.monotonic() + DEADLINE
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if not line:
                break
            if text in line:
                return line.strip()
        raise AssertionError(f"no {text!r} from the child; output:\n{''.join(self.output)}")

    def ask(self) -> str:
        assert self.process.stdin is not None
        self.process.stdin.write("?\n")
        self.process.stdin.flush()
        return self.wait_for("count")

    def exit_code(self) -> int:
        return self.process.wait(timeout=DEADLINE)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=DEADLINE)

    def close(self) -> None:
        self.kill()
        self._reader.join(timeout=DEADLINE)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


@pytest.fixture
def children() -> Iterator[list[Child]]:
    started: list[Child] = []
    yield started
    for child in started:
        child.close()


def _store_child(children: list[Child], data_dir: Path, *, close: bool = True) -> Child:
    child = Child(["-c", STORE_CHILD, str(data_dir), "close" if close else "leave-open"], cwd=data_dir.parent)
    children.append(child)
    child.wait_for("ready")
    return child


def _store(data_dir: Path) -> PostgresVectorStore:
    return PostgresVectorStore(PostgresStoreOptions(data_dir=data_dir, schema="lifecycle", tokenising_process=False))


async def test_a_killed_user_does_not_keep_the_server_running(data_dir: Path, children: list[Child]) -> None:
    """A SIGKILLed process never detaches; the next process to open and close a store stops the server."""
    child = _store_child(children, data_dir)
    assert _postmaster(data_dir) is not None
    child.kill()
    assert _postmaster(data_dir) is not None  # nobody stopped it: the killed process was its only user
    async with _store(data_dir) as store:
        assert await store.count("docs") == 0
    assert _postmaster(data_dir) is None


async def test_closing_one_user_keeps_the_server_for_the_other(data_dir: Path, children: list[Child]) -> None:
    """Two live processes: whichever closes first leaves the server to the other; the last one stops it."""
    child = _store_child(children, data_dir)
    async with _store(data_dir) as store:
        assert await store.count("docs") == 0
    assert _postmaster(data_dir) is not None
    assert child.ask() == "count 0"  # the child's pool still works
    async with _store(data_dir) as store:
        assert child.process.stdin is not None
        child.process.stdin.close()  # the child closes its store and exits
        assert child.exit_code() == 0
        assert _postmaster(data_dir) is not None
        assert await store.count("docs") == 0
    assert _postmaster(data_dir) is None


def test_a_process_that_exits_without_closing_still_stops_the_server(data_dir: Path, children: list[Child]) -> None:
    """A normal exit with the store never closed detaches at interpreter exit; as the last user it stops the server."""
    child = _store_child(children, data_dir, close=False)
    assert child.process.stdin is not None
    child.process.stdin.close()
    assert child.exit_code() == 0, "".join(child.output)
    assert _postmaster(data_dir) is None


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_runiq_serve_stops_the_host_and_the_server_on_a_signal(
    root: Path, data_dir: Path, children: list[Child], sig: signal.Signals
) -> None:
    """`runiq serve` (uvicorn) stops serving, stops the host (closing the store, which stops the server),
    and exits with 128 + the signal number. Run from another directory: data_dir resolves next to the file."""
    child = Child(["-c", SERVE_CHILD, "serve", str(root / "runiq.toml"), "--port", "0"], cwd=root / "elsewhere")
    children.append(child)
    child.wait_for("dashboard.started")
    assert not (root / "elsewhere" / "data").exists()
    assert _postmaster(data_dir) is not None
    child.process.send_signal(sig)
    assert child.exit_code() == 128 + sig, "".join(child.output)
    assert _postmaster(data_dir) is None
    assert "Traceback" not in "".join(child.output)


def test_runiq_command_stops_the_server_on_sigterm(root: Path, data_dir: Path, children: list[Child]) -> None:
    """A CLI command (`runiq ingest`) cancelled by SIGTERM closes its stores (stopping the server) and
    exits with 143, instead of dying with the server left running."""
    child = Child(["-c", INGEST_CHILD, "ingest", "-c", str(root / "runiq.toml")], cwd=root / "elsewhere")
    children.append(child)
    assert child.wait_for("ready") == "ready completed"
    assert not (root / "elsewhere" / "data").exists()
    assert _postmaster(data_dir) is not None
    child.process.send_signal(signal.SIGTERM)
    assert child.exit_code() == 128 + signal.SIGTERM, "".join(child.output)
    assert _postmaster(data_dir) is None
    assert "stopped (SIGTERM)" in "".join(child.output)


def test_detaching_from_a_vanished_data_directory_does_not_raise(tmp_path: Path) -> None:
    """Closing a store must not fail because its data directory is gone; the attachment is released."""
    lock_fd = os.open(tmp_path / "attached", os.O_RDONLY | os.O_CREAT, 0o600)
    attachment = embedded._Attachment(server=None, lock_fd=lock_fd, uri="unused")  # type: ignore[arg-type]
    embedded._detach(tmp_path / "missing", attachment)
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(lock_fd)  # closed
