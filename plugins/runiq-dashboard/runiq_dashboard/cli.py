"""The ``runiq.cli`` entry point: adds ``runiq serve`` to the ``runiq`` command line.

Importing this module loads typer and runiq's CLI toolkit only, so ``runiq --help`` stays fast; the
server (FastAPI, uvicorn) and the RAG core load when ``runiq serve`` runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from runiq.cli.toolkit import ConfigOption, build_host, console, run_command
from runiq.plugins import hookimpl
from runiq_dashboard.defaults import DEFAULT_PORT

if TYPE_CHECKING:
    from runiq.cli.toolkit import CommandRegistry

__all__ = ["runiq_register_cli_commands", "serve"]


@hookimpl
def runiq_register_cli_commands(commands: CommandRegistry) -> None:
    commands.add_command("serve", serve)


def serve(
    ctx: typer.Context,
    config_argument: Annotated[
        Path | None,
        typer.Argument(metavar="CONFIG", help="The runiq.toml to serve (same as -c).", show_default=False),
    ] = None,
    config: ConfigOption = Path("runiq.toml"),
    host: Annotated[str, typer.Option(help="Interface to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Port for the dashboard (0: any free port).")
    ] = DEFAULT_PORT,
) -> None:
    """Run the host with its ingestion strategies and the dashboard; prints the page URL once it listens."""
    source = ctx.get_parameter_source("config")
    if config_argument is not None and getattr(source, "name", None) == "COMMANDLINE":
        raise typer.BadParameter("CONFIG or --config, not both")
    run_command(serve_until_stopped(config_argument or config, host, port))


def _announce(url: str) -> None:
    console.print(f"runiq dashboard: {url}", markup=False, highlight=False, soft_wrap=True)
    console.file.flush()


async def serve_until_stopped(config: Path, bind: str, port: int) -> None:
    """Serve the host ``config`` declares; the page URL goes to stdout once the server listens.

    The server starts and stops the host; Ctrl-C or SIGTERM stops both (see ``DashboardServer.run``)."""
    import asyncio

    from runiq_dashboard.server import DashboardServer

    server = DashboardServer(build_host(config), host=bind, port=port, log_level="info")
    started = asyncio.ensure_future(server.started.wait())
    started.add_done_callback(lambda task: None if task.cancelled() else _announce(server.url))
    try:
        await server.run()
    finally:
        started.cancel()
