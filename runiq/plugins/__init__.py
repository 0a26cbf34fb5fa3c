"""The plugin system: pluggy markers, hook specifications, the provider registry and the typed facade."""

from __future__ import annotations

from runiq.plugins.hookspecs import hookimpl, hookspec
from runiq.plugins.host import PluginHost
from runiq.plugins.registry import (
    EmptyOptions,
    ProviderFactory,
    ProviderKind,
    ProviderRegistry,
    ProviderSpec,
)

__all__ = [
    "EmptyOptions",
    "PluginHost",
    "ProviderFactory",
    "ProviderKind",
    "ProviderRegistry",
    "ProviderSpec",
    "hookimpl",
    "hookspec",
]
