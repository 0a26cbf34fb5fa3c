"""Serving the dashboard: the host's lifecycle around a uvicorn server.

``serve(host)`` blocks until interrupted. ``serve_config(path)`` is the coroutine ``runiq serve CONFIG``
runs: it builds the host from a ``runiq.toml`` (with installed plugins) and serves it.
:class:`DashboardServer` is the awaitable building block: ``await server.run()`` starts the host,
serves, and stops the host after uvicorn shuts down (which cancels and awaits active ingestion runs).
A SIGINT or SIGTERM that made uvicorn shut down is raised again only once the host has stopped.
"""

from __future__ import annotations

import asyncio
import signal
import socket
from pathlib import Path
from types import FrameType

import uvicorn
from pydantic import ValidationError

from runiq.errors import RagConfigurationError, call_translated, invalid_fields
from runiq.hosting import Host, HostBuilder
from runiq.logging import configure_logging, get_logger
from runiq.rag import add_runiq_rag
from runiq.settings import RuniqSettings
from runiq_dashboard.app import create_dashboard_app, options_for
from runiq_dashboard.defaults import DEFAULT_PORT
from runiq_dashboard.log_filter import install_exception_type_only
from runiq_dashboard.loopback import is_loopback_bind
from runiq_dashboard.options import DashboardOptions

__all__ = ["DEFAULT_PORT", "DashboardServer", "serve", "serve_config"]

log = get_logger(__name__)


class DashboardServer:
    """One host plus one uvicorn server on ``host:port`` (``port=0`` picks a free port)."""

    def __init__(
        self,
        runiq_host: Host,
        /,
        *,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        options: DashboardOptions | None = None,
        log_level: str = "warning",
    ) -> None:
        self.options = options_for(runiq_host, options)
        self._runiq_host = runiq_host
        self.app = create_dashboard_app(runiq_host, self.options)
        # uvicorn's default proxy handling trusts X-Forwarded-For only from 127.0.0.1, so a proxy on
        # this machine that forwards the real client address turns it back into a non-loopback client.
        # No access log: it would hold paths and query strings (request values) and client addresses.
        config = uvicorn.Config(self.app, host=host, port=port, log_level=log_level, lifespan="off", access_log=False)
        install_exception_type_only()  # uvicorn.Config's dictConfig replaces handlers and keeps filters
        self.started = asyncio.Event()
        self._server = _NotifyingServer(config, self.started)
        self._bind = host

    @property
    def port(self) -> int:
        """The bound port (useful with ``port=0``); only valid once :attr:`started` is set."""
        sockets = self._server.servers[0].sockets if self._server.servers else []
        if not sockets:
            raise RuntimeError("The dashboard server is not listening yet.")
        port: int = sockets[0].getsockname()[1]
        return port

    @property
    def url(self) -> str:
        host = f"[{self._bind}]" if ":" in self._bind else self._bind
        return f"http://{host}:{self.port}{self.options.base_path}/"

    async def run(self) -> None:
        if not self.options.credentials and self.options.access_policy is None and not is_loopback_bind(self._bind):
            log.warning("dashboard.loopback_only", reason="no credentials configured; remote clients get 403")
        async with self._runiq_host:
            serving = asyncio.create_task(self._server.serve(), name="runiq-dashboard-uvicorn")
            started = asyncio.create_task(self.started.wait())
            try:
                await asyncio.wait({serving, started}, return_when=asyncio.FIRST_COMPLETED)
                if self.started.is_set():
                    log.info("dashboard.started", port=self.port, base_path=self.options.base_path)
                await serving
            finally:
                started.cancel()
                self._server.should_exit = True
                if not serving.done():
                    await asyncio.wait({serving}, timeout=5)
        for sig in reversed(self._server.deferred_signals):  # what uvicorn would have done, now the host stopped
            signal.raise_signal(sig)

    def request_stop(self) -> None:
        """Ask uvicorn to finish; :meth:`run` then stops the host. Safe from any thread."""
        self._server.should_exit = True


class _NotifyingServer(uvicorn.Server):
    """Sets ``started`` once uvicorn listens (uvicorn itself only has a boolean attribute)."""

    def __init__(self, config: uvicorn.Config, started: asyncio.Event) -> None:
        super().__init__(config)
        self._started_event = started
        self.deferred_signals: list[int] = []

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # uvicorn's own handler also queues the signal to raise again as soon as serving ends, which is
        # before the host stops: SIGTERM's default action would then kill the process with the stores
        # open and an embedded database left running. DashboardServer.run raises them after the host.
        self.deferred_signals.append(sig)
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        else:
            self.should_exit = True

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._started_event.set()


def serve(
    runiq_host: Host,
    /,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    options: DashboardOptions | None = None,
    log_level: str = "info",
) -> None:
    """Start ``runiq_host``, serve its dashboard until interrupted (Ctrl-C / SIGTERM), then stop it.

    Binds to loopback by default. Without configured credentials only loopback clients are served, so
    binding to another interface also needs ``DashboardOptions(credentials=...)``.
    """
    asyncio.run(DashboardServer(runiq_host, host=host, port=port, options=options, log_level=log_level).run())


async def serve_config(
    config: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    options: DashboardOptions | None = None,
    log_level: str = "info",
) -> None:
    """Build a host from ``config`` (a ``runiq.toml``; installed plugins load through entry points),
    then serve it like :func:`serve`. Dashboard options come from ``options`` or ``RUNIQ_DASHBOARD__*``.

    Raises:
        RagConfigurationError: the file is missing or invalid (fields are named, values never shown).
    """
    settings = _load_settings(Path(config))  # start-up, before anything serves: blocking is fine
    configure_logging(settings.logging)
    builder = HostBuilder(settings=settings)
    add_runiq_rag(builder)
    server = DashboardServer(builder.build(), host=host, port=port, options=options, log_level=log_level)
    await server.run()


def _load_settings(path: Path) -> RuniqSettings:
    if not path.is_file():
        raise RagConfigurationError("The configuration file does not exist.")
    # Raised outside ``except``: the ValidationError holds every value (a DSN, a key) as input.
    return call_translated(lambda: RuniqSettings.load(path), _invalid_settings)


def _invalid_settings(exc: Exception) -> Exception:
    if isinstance(exc, ValidationError):
        return invalid_fields("Invalid configuration", whole="settings")(exc)
    if isinstance(exc, ValueError) and not isinstance(exc, RagConfigurationError):  # TOML syntax errors
        return RagConfigurationError("The configuration file is not valid TOML.")
    return exc
