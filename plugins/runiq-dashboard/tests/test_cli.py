"""``runiq serve``, which the dashboard adds to the command line through runiq_register_cli_commands
(entry-point group ``runiq.cli``): it takes the configuration like every other command (-c, or the
positional argument it always took) and prints the dashboard page URL once it listens."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from runiq.cli.main import create_app
from runiq_dashboard import cli as dashboard_cli

CONFIG = """\
[rag.indexes.notes]
default_mode = "lexical"
sources = [{ path = "docs", pattern = "*.md" }]

[rag.indexes.notes.vector_store]
provider = "in-memory"
"""

_SERVER_STACK = ("fastapi", "uvicorn", "starlette", "runiq_dashboard.app", "runiq_dashboard.server")
_PROBE = "import json, sys, importlib\nimportlib.import_module(sys.argv[1])\nprint(json.dumps(sorted(sys.modules)))"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("Remote work policy POL-HR-014.", encoding="utf-8")
    path = tmp_path / "runiq.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Path, str, int]]:
    """Replaces the server: records what `runiq serve` would run."""
    calls: list[tuple[Path, str, int]] = []

    async def serve_until_stopped(config: Path, bind: str, port: int) -> None:
        calls.append((config, bind, port))

    monkeypatch.setattr(dashboard_cli, "serve_until_stopped", serve_until_stopped)
    return calls


def _app():  # type: ignore[no-untyped-def]
    return create_app(plugins=[dashboard_cli], load_entry_points=False)


def test_hook_runiq_register_cli_commands_entry_point_is_declared() -> None:
    """Distribution runiq-dashboard declares runiq_dashboard.cli in the 'runiq.cli' group."""
    [point] = [ep for ep in entry_points(group="runiq.cli") if ep.name == "dashboard"]
    assert point.value == "runiq_dashboard.cli"
    assert point.load() is dashboard_cli


def test_hook_runiq_register_cli_commands_adds_serve() -> None:
    """`runiq --help` lists serve, recorded as the dashboard plugin's command."""
    result = CliRunner().invoke(_app(), ["--help"])
    assert result.exit_code == 0
    assert "│ serve " in result.output
    assert "--port" in CliRunner().invoke(_app(), ["serve", "--help"]).output


@pytest.mark.parametrize(
    ("entry_module", "unwanted"),
    [
        # what `runiq --help` imports: no server stack and no RAG core or host
        ("runiq_dashboard.cli", (*_SERVER_STACK, "runiq.rag.", "runiq.hosting", "pydantic_settings")),
        # what building any host imports (`runiq status`): no server stack
        ("runiq_dashboard.plugin", _SERVER_STACK),
    ],
)
def test_the_entry_point_modules_import_no_server_stack(entry_module: str, unwanted: tuple[str, ...]) -> None:
    completed = subprocess.run(  # our own interpreter importing our own modules
        [sys.executable, "-c", _PROBE, entry_module], capture_output=True, text=True, timeout=120, check=True
    )
    modules = set(json.loads(completed.stdout))
    loaded = sorted(
        m for m in modules if any(m == u or m.startswith(u if u.endswith(".") else f"{u}.") for u in unwanted)
    )
    assert loaded == []


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["-c", "a.toml"], Path("a.toml")),
        (["--config", "a.toml"], Path("a.toml")),
        (["a.toml"], Path("a.toml")),
        ([], Path("runiq.toml")),
    ],
)
def test_serve_takes_the_config_like_every_command(
    served: list[tuple[Path, str, int]], arguments: list[str], expected: Path
) -> None:
    result = CliRunner().invoke(_app(), ["serve", *arguments, "--port", "0"])
    assert result.exit_code == 0, result.output
    assert served == [(expected, "127.0.0.1", 0)]


def test_the_config_from_the_environment_yields_to_the_argument(served: list[tuple[Path, str, int]]) -> None:
    result = CliRunner().invoke(_app(), ["serve", "b.toml"], env={"RUNIQ_CONFIG": "a.toml"})
    assert result.exit_code == 0, result.output
    assert served[0][0] == Path("b.toml")


def test_an_argument_and_an_option_together_are_a_usage_error(served: list[tuple[Path, str, int]]) -> None:
    result = CliRunner().invoke(_app(), ["serve", "a.toml", "-c", "b.toml"])
    assert result.exit_code == 2
    assert "not both" in result.output
    assert served == []


def test_serve_prints_the_page_url_and_stops_on_sigterm(config: Path) -> None:
    """A real `runiq serve -c CONFIG --port 0` (the command found through its entry point): the printed
    URL is the page, served to a loopback client; SIGTERM stops server and host, exit 128 + 15."""
    environment = {k: v for k, v in os.environ.items() if not k.upper().startswith("RUNIQ_")}
    process = subprocess.Popen(  # our own interpreter running our own CLI
        [sys.executable, "-m", "runiq.cli", "serve", "-c", str(config), "--port", "0"],
        cwd=config.parent,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # blocks until the server listens (or the process ends)
        match = re.fullmatch(r"runiq dashboard: (http://127\.0\.0\.1:\d+/runiq/)\n", line)
        assert match, (line, process.stderr.read() if process.poll() is not None and process.stderr else "")
        page = httpx.get(match.group(1), timeout=30)
        assert page.status_code == 200
        assert "text/html" in page.headers["content-type"]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 128 + signal.SIGTERM
        assert process.stdout.read() == ""  # logs go to stderr: stdout holds the URL line only
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
