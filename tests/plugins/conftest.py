"""Fixtures for the plugin tests: plugin objects built on the fly, as modules (pluggy's canonical plugin)."""

from __future__ import annotations

import os
import types
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from runiq.plugins import EmptyOptions, ProviderRegistry, hookimpl


@pytest.fixture(autouse=True)
def _clean_runiq_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """RUNIQ_* variables of the machine running the tests must not add indexes or block plugins."""
    for name in list(os.environ):
        if name.upper().startswith("RUNIQ_"):
            monkeypatch.delenv(name)


def _plugin(name: str, **hooks: Callable[..., Any]) -> types.ModuleType:
    module = types.ModuleType(name)
    for hook_name, function in hooks.items():
        setattr(module, hook_name, hookimpl(function))
    return module


@pytest.fixture
def make_plugin() -> Callable[..., types.ModuleType]:
    """``make_plugin("name", runiq_register_providers=fn)``: a module plugin whose canonical name is ``name``."""
    return _plugin


@asynccontextmanager
async def _nothing(options: EmptyOptions) -> AsyncIterator[object]:
    yield object()


@pytest.fixture
def provider_plugin() -> Callable[..., types.ModuleType]:
    """``provider_plugin("name", embedding="x")``: a plugin registering providers of the given kinds."""

    def make(name: str, *, embedding: str | None = None, vector_store: str | None = None) -> types.ModuleType:
        def runiq_register_providers(registry: ProviderRegistry) -> None:
            if embedding is not None:
                registry.add_embedding(embedding, _nothing)
            if vector_store is not None:
                registry.add_vector_store(vector_store, _nothing)

        return _plugin(name, runiq_register_providers=runiq_register_providers)

    return make
