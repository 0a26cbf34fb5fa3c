"""Commands that plugins add to ``runiq`` through ``runiq_register_cli_commands``.

Like Flask's ``flask.commands``, plugin command modules are declared in their own entry-point group,
``runiq.cli``, and the command group loads them the first time it needs its list of commands (to
resolve a name or print help). So ``runiq --help`` imports those small modules only, never the provider
plugins of the ``runiq`` group or their SDKs, and a command imports what it needs when it runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from runiq.cli.toolkit import err

__all__ = ["KNOWN_COMMANDS", "CommandRegistry", "PluginCommandGroup"]

# Commands runiq knows by name but does not ship in the core: running one says what to install.
KNOWN_COMMANDS: Mapping[str, str] = {"serve": "runiq-dashboard"}

_COMMAND_NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*\Z")


class CommandRegistry:
    """What ``runiq_register_cli_commands`` receives: names are unique across runiq's own commands and
    every plugin's, and each command records the plugin that added it."""

    def __init__(self, builtin: Iterable[str] = ()) -> None:
        self._owners = dict.fromkeys(builtin, "runiq")
        self._commands: dict[str, TyperCommand] = {}
        self._current_plugin = "<direct>"

    def set_current_plugin(self, name: str) -> None:
        self._current_plugin = name

    def add_command(self, name: str, function: Callable[..., Any]) -> None:
        """Add ``runiq NAME``, which runs ``function``: a typer command function (parameters annotated
        with ``typer.Argument``/``typer.Option``; its docstring is the help). Use
        :mod:`runiq.cli.toolkit` for the shared options, the consoles and running coroutines.

        Raises:
            RagConfigurationError: the name is not lower-case words joined by hyphens, or is taken.
        """
        from runiq.errors import RagConfigurationError

        if not isinstance(name, str) or not _COMMAND_NAME.match(name):
            raise RagConfigurationError("A runiq command name is lower-case letters and digits joined by hyphens.")
        owner = self._owners.get(name)
        if owner is not None:
            raise RagConfigurationError(
                f"runiq command '{name}' is registered by both '{owner}' and '{self._current_plugin}'."
            )
        self._commands[name] = _command(name, function)
        self._owners[name] = self._current_plugin

    @property
    def commands(self) -> Mapping[str, TyperCommand]:
        """The commands plugins added, by name."""
        return dict(self._commands)

    def plugin_of(self, name: str) -> str:
        """The plugin that added ``name`` (``"runiq"`` for a built-in command)."""
        return self._owners[name]


def _command(name: str, function: Callable[..., Any], **settings: Any) -> TyperCommand:
    single = typer.Typer(add_completion=False)
    single.command(name=name, **settings)(function)
    command = typer.main.get_command(single)  # one command and no callback: a command, not a group
    assert isinstance(command, TyperCommand)
    return command


class PluginCommandGroup(TyperGroup):
    """The ``runiq`` command group: runiq's own commands, and on first need the plugins' commands.

    ``plugins`` (extra plugin objects) and ``load_entry_points`` are class settings; use :meth:`using`.
    """

    plugins: tuple[object, ...] = ()
    load_entry_points: bool = True

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self._plugin_commands_loaded = False

    @classmethod
    def using(cls, *, plugins: Iterable[object] = (), load_entry_points: bool = True) -> type[PluginCommandGroup]:
        """A group class that loads these plugins' commands."""
        settings = {"plugins": tuple(plugins), "load_entry_points": load_entry_points}
        return type(cls.__name__, (cls,), settings)

    def list_commands(self, ctx: Any) -> list[str]:
        self._load_plugin_commands()
        return super().list_commands(ctx)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        self._load_plugin_commands()
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in KNOWN_COMMANDS:
            return _not_installed(cmd_name, KNOWN_COMMANDS[cmd_name])
        return command

    def _load_plugin_commands(self) -> None:
        """A plugin that fails to load or to register is a warning: runiq's own commands keep working."""
        if self._plugin_commands_loaded:
            return
        self._plugin_commands_loaded = True
        from runiq.errors import RagConfigurationError
        from runiq.plugins.host import CLI_ENTRY_POINT_GROUP, PluginHost

        registry = CommandRegistry(builtin=self.commands)
        try:
            host = PluginHost.create(
                plugins=self.plugins,
                load_entry_points=self.load_entry_points,
                entry_point_group=CLI_ENTRY_POINT_GROUP,
                on_unloadable=_warn,
            )
            host.register_cli_commands(registry)
        except RagConfigurationError as exc:
            _warn(exc)
        for name, command in registry.commands.items():
            self.add_command(command, name)


def _warn(error: Exception) -> None:
    err.print(f"warning: {error}", style="yellow", markup=False, highlight=False, soft_wrap=True)


def _not_installed(name: str, distribution: str) -> TyperCommand:
    """A hidden stand-in for a known plugin command: it says what to install, whatever its arguments."""

    def missing() -> None:
        message = f"error: `runiq {name}` needs {distribution}; pip install {distribution}"
        err.print(message, style="red", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(1)

    settings = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []}
    return _command(name, missing, hidden=True, context_settings=settings)
