"""The plugin system: pluggy markers, hook specifications, the provider registry and the typed facade.

Names load on first use (PEP 562), so a plugin module that only needs ``hookimpl`` (a ``runiq.cli``
command module, say) does not import the provider registry and pydantic.
"""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING

from runiq.plugins.hookspecs import hookimpl, hookspec

if TYPE_CHECKING:
    from runiq.plugins.host import PluginHost
    from runiq.plugins.registry import EmptyOptions, ProviderFactory, ProviderKind, ProviderRegistry, ProviderSpec

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

_REGISTRY_NAMES = ("EmptyOptions", "ProviderFactory", "ProviderKind", "ProviderRegistry", "ProviderSpec")
_LAZY = {"PluginHost": "runiq.plugins.host", **dict.fromkeys(_REGISTRY_NAMES, "runiq.plugins.registry")}


if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any attribute

    def __getattr__(name: str) -> object:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(_importlib.import_module(module), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(__all__))
