"""Plugins add ``runiq`` commands through runiq_register_cli_commands (entry-point group ``runiq.cli``),
loaded when the command line first needs its command list; the core CLI imports no plugin itself."""

from __future__ import annotations

import ast
import importlib.metadata
import types
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
from typer.testing import CliRunner

from runiq.cli.extensions import CommandRegistry
from runiq.cli.main import create_app
from runiq.cli.toolkit import console
from runiq.errors import RagConfigurationError
from runiq.plugins import hookimpl

ROOT = Path(__file__).resolve().parents[2]


def hello(name: Annotated[str, typer.Option(help="Who to greet.")] = "world") -> None:
    """Greet someone."""
    console.print(f"hello {name}", markup=False)


def _plugin(name: str, register: Callable[[CommandRegistry], None]) -> types.ModuleType:
    module = types.ModuleType(name)
    module.runiq_register_cli_commands = hookimpl(register)  # type: ignore[attr-defined]
    return module


def _adding(command: str, function: Callable[..., Any] = hello) -> Callable[[CommandRegistry], None]:
    def register(commands: CommandRegistry) -> None:
        commands.add_command(command, function)

    return register


def test_hook_runiq_register_cli_commands_adds_a_command_to_runiq() -> None:
    """A plugin's command runs with its options, is listed in --help, and is recorded with its plugin."""
    registries: list[CommandRegistry] = []

    def register(commands: CommandRegistry) -> None:
        registries.append(commands)
        commands.add_command("hello", hello)

    app = create_app(plugins=[_plugin("greeter", register)], load_entry_points=False)
    result = CliRunner().invoke(app, ["hello", "--name", "runiq"])
    assert result.exit_code == 0, result.output
    assert "hello runiq" in result.output
    assert "Greet someone." in CliRunner().invoke(app, ["--help"]).output
    assert len(registries) == 2  # once per invocation
    registry = registries[-1]
    assert (registry.plugin_of("hello"), registry.plugin_of("status")) == ("greeter", "runiq")


def test_hook_runiq_register_cli_commands_runs_when_the_commands_are_first_needed() -> None:
    """Building the app calls no hook; one invocation calls it once, however often commands are looked up."""
    calls: list[str] = []

    def register(commands: CommandRegistry) -> None:
        calls.append("called")
        commands.add_command("hello", hello)

    app = create_app(plugins=[_plugin("greeter", register)], load_entry_points=False)
    assert calls == []
    assert CliRunner().invoke(app, ["--help"]).exit_code == 0
    assert calls == ["called"]


@pytest.mark.parametrize("taken", ["status", "ingest", "query"])
def test_hook_runiq_register_cli_commands_cannot_replace_a_runiq_command(taken: str) -> None:
    """A plugin command under a built-in name is refused (a warning naming both); the built-in stays."""
    app = create_app(plugins=[_plugin("squatter", _adding(taken))], load_entry_points=False)
    result = CliRunner().invoke(app, [taken, "--help"])
    assert result.exit_code == 0
    assert f"runiq command '{taken}' is registered by both 'runiq' and 'squatter'" in result.output
    assert "Greet someone." not in result.output


def test_two_plugins_cannot_add_the_same_command() -> None:
    registry = CommandRegistry(builtin=["status"])
    registry.set_current_plugin("first")
    registry.add_command("hello", hello)
    registry.set_current_plugin("second")
    with pytest.raises(RagConfigurationError, match="'hello' is registered by both 'first' and 'second'"):
        registry.add_command("hello", hello)
    assert list(registry.commands) == ["hello"]


@pytest.mark.parametrize("name", ["", "Hello", "hello world", "-hello", "hello-", "héllo", "hello_there"])
def test_a_command_name_is_lower_case_words_joined_by_hyphens(name: str) -> None:
    with pytest.raises(RagConfigurationError, match="lower-case"):
        CommandRegistry().add_command(name, hello)


def test_a_plugin_that_fails_to_import_is_a_warning_and_runiq_keeps_working(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The broken module is named with its exception's class, never its message; `runiq status --help`
    still works."""
    (tmp_path / "runiq_broken_cli.py").write_text("raise RuntimeError('CANARY-cli-secret')\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    entry_point = importlib.metadata.EntryPoint(name="broken", value="runiq_broken_cli", group="runiq.cli")
    distribution = types.SimpleNamespace(entry_points=[entry_point], metadata={"Name": "runiq-broken"})
    monkeypatch.setattr(importlib.metadata, "distributions", lambda: [distribution])
    result = CliRunner().invoke(create_app(), ["status", "--help"])
    assert result.exit_code == 0, result.output
    assert "'broken' from distribution 'runiq-broken' could not be loaded (RuntimeError)" in result.output
    assert "CANARY-cli-secret" not in result.output


def test_only_the_runiq_cli_entry_point_group_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A provider plugin (group ``runiq``) is not imported by the command line's plugin loading."""
    loaded: list[str] = []
    points = [
        importlib.metadata.EntryPoint(name="provider", value="runiq_provider_never_imported", group="runiq"),
        importlib.metadata.EntryPoint(name="greeter", value="runiq_greeter_cli", group="runiq.cli"),
    ]
    greeter = _plugin("runiq_greeter_cli", _adding("hello"))
    monkeypatch.setattr(
        importlib.metadata.EntryPoint, "load", lambda self: loaded.append(self.value) or greeter, raising=True
    )
    distribution = types.SimpleNamespace(entry_points=points, metadata={"Name": "runiq-greeter"})
    monkeypatch.setattr(importlib.metadata, "distributions", lambda: [distribution])
    result = CliRunner().invoke(create_app(), ["hello"])
    assert result.exit_code == 0, result.output
    assert loaded == ["runiq_greeter_cli"]


def test_a_known_plugin_command_that_is_not_installed_says_what_to_install() -> None:
    """Without the dashboard, `runiq serve ...` (any arguments) exits 1 naming the distribution."""
    app = create_app(load_entry_points=False)
    result = CliRunner().invoke(app, ["serve", "-c", "runiq.toml", "--port", "0"])
    assert result.exit_code == 1
    assert "pip install runiq-dashboard" in result.output
    assert "│ serve " not in CliRunner().invoke(app, ["--help"]).output  # hidden


def test_an_unknown_command_is_still_a_usage_error() -> None:
    result = CliRunner().invoke(create_app(load_entry_points=False), ["serv"])
    assert result.exit_code == 2
    assert "No such command" in result.output


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            names.add(node.module)
    return names


def test_the_core_never_imports_a_plugin_package() -> None:
    """Layering: no module under runiq/ imports runiq_dashboard (or any runiq_* plugin package)."""
    offenders = {
        f"{path.relative_to(ROOT)}: {module}"
        for path in (ROOT / "runiq").rglob("*.py")
        for module in _imported_modules(path)
        if module.startswith("runiq_")
    }
    assert offenders == set()
