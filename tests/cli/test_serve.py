"""``runiq serve`` takes the configuration like every other command (-c, or the positional argument it
always took) and prints the dashboard page URL once it listens."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from runiq.cli import commands
from runiq.cli.main import app


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Path, str, int]]:
    """Replaces the server: records what `runiq serve` would run."""
    calls: list[tuple[Path, str, int]] = []

    async def serve(config: Path, bind: str, port: int, announce: object) -> None:
        calls.append((config, bind, port))

    monkeypatch.setattr(commands, "serve", serve)
    return calls


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
    result = CliRunner().invoke(app, ["serve", *arguments, "--port", "0"])
    assert result.exit_code == 0, result.output
    assert served == [(expected, "127.0.0.1", 0)]


def test_the_config_from_the_environment_yields_to_the_argument(served: list[tuple[Path, str, int]]) -> None:
    result = CliRunner().invoke(app, ["serve", "b.toml"], env={"RUNIQ_CONFIG": "a.toml"})
    assert result.exit_code == 0, result.output
    assert served[0][0] == Path("b.toml")


def test_an_argument_and_an_option_together_are_a_usage_error(served: list[tuple[Path, str, int]]) -> None:
    result = CliRunner().invoke(app, ["serve", "a.toml", "-c", "b.toml"])
    assert result.exit_code == 2
    assert "not both" in result.output
    assert served == []


def test_serve_prints_the_page_url_and_stops_on_sigterm(config: Path) -> None:
    """A real `runiq serve -c CONFIG --port 0`: the printed URL is the page, served to a loopback client."""
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
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
