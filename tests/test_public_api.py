"""The curated public surface of runiq.rag, pinned (httpx's test_all_imports_are_exported)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import runiq.rag


def _public_members() -> dict[str, object]:
    return {name: value for name, value in vars(runiq.rag).items() if not name.startswith("_")}


def test_all_is_sorted_and_unique() -> None:
    """runiq.rag.__all__ is sorted and lists each name once."""
    assert runiq.rag.__all__ == sorted(runiq.rag.__all__)
    assert len(set(runiq.rag.__all__)) == len(runiq.rag.__all__)


def test_every_name_in_all_is_importable() -> None:
    """Every name in __all__ exists on the package, and ``from runiq.rag import *`` binds exactly __all__."""
    namespace: dict[str, object] = {}
    exec("from runiq.rag import *", namespace)
    namespace.pop("__builtins__")
    assert sorted(namespace) == runiq.rag.__all__
    for name in runiq.rag.__all__:
        assert getattr(runiq.rag, name) is namespace[name]


def test_all_imports_are_exported() -> None:
    """Every public class or function the package re-exports from runiq's own modules is listed in __all__."""
    reexported = sorted(
        name
        for name, value in _public_members().items()
        if (inspect.isclass(value) or inspect.isfunction(value))
        and getattr(value, "__module__", "").startswith("runiq.")
    )
    missing = [name for name in reexported if name not in runiq.rag.__all__]
    assert missing == []


def test_nothing_else_public_leaks_onto_the_package() -> None:
    """Apart from submodules (and the ``annotations`` future import), runiq.rag's public names are __all__."""
    extras = {
        name
        for name, value in _public_members().items()
        if not inspect.ismodule(value) and name not in runiq.rag.__all__ and name != "annotations"
    }
    assert extras == set()


def test_all_names_are_public_and_come_from_runiq() -> None:
    """__all__ has no private names, and each class or function in it is defined inside runiq."""
    for name in runiq.rag.__all__:
        assert not name.startswith("_")
        value = getattr(runiq.rag, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__.startswith("runiq."), name


def test_every_submodule_imports() -> None:
    """Each runiq.rag submodule imports on its own (no import cycles hidden by the package order)."""
    names = [info.name for info in pkgutil.walk_packages(runiq.rag.__path__, prefix="runiq.rag.")]
    assert "runiq.rag.registration.builder" in names
    for name in names:
        importlib.import_module(name)


def test_documented_names_are_public() -> None:
    """The names DESIGN.md promises for runiq.rag are all exported."""
    promised = {
        "add_runiq_rag",
        "RagBuilder",
        "IndexBuilder",
        "RagQuery",
        "RagRetrievalMode",
        "RagRetriever",
        "RagRetrievalResult",
        "RagRetrievalProvenance",
        "HashingEmbedding",
        "RagIngestionManager",
        "RagIngestionOperation",
        "RagIngestionState",
        "RagIndexReadiness",
        "RagError",
        "RagConfigurationError",
        "ProviderNotFoundError",
        "IndexDefinition",
        "hookimpl",
    }
    assert promised <= set(runiq.rag.__all__)
