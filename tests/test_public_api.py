"""The two curated faces, pinned (httpx's test_all_imports_are_exported): ``runiq.rag`` for applications,
``runiq.rag.providers`` for provider authors."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import runiq.rag
import runiq.rag.providers

FACES = [runiq.rag, runiq.rag.providers]
MAX_APPLICATION_NAMES = 60


def _public_members(face: ModuleType) -> dict[str, object]:
    return {name: value for name, value in vars(face).items() if not name.startswith("_")}


@pytest.fixture(params=FACES, ids=lambda face: face.__name__)
def face(request: pytest.FixtureRequest) -> ModuleType:
    module: ModuleType = request.param
    return module


def test_the_application_face_stays_small() -> None:
    """runiq.rag exports what an application needs, at most 60 names; providers' names live elsewhere."""
    assert len(runiq.rag.__all__) <= MAX_APPLICATION_NAMES


def test_all_is_sorted_and_unique(face: ModuleType) -> None:
    """A face's __all__ is sorted and lists each name once."""
    assert face.__all__ == sorted(face.__all__)
    assert len(set(face.__all__)) == len(face.__all__)


def test_every_name_in_all_is_importable(face: ModuleType) -> None:
    """Every name in __all__ exists on the face, and ``from <face> import *`` binds exactly __all__."""
    namespace: dict[str, object] = {}
    exec(f"from {face.__name__} import *", namespace)
    namespace.pop("__builtins__")
    assert sorted(namespace) == face.__all__
    for name in face.__all__:
        assert getattr(face, name) is namespace[name]


def test_an_unknown_name_is_an_attribute_error(face: ModuleType) -> None:
    """A name outside __all__ is not reachable through the face (one import path per name)."""
    with pytest.raises(AttributeError, match="no attribute 'RagChunkz'"):
        _ = face.RagChunkz
    assert "RagChunk" not in runiq.rag.__all__
    with pytest.raises(AttributeError):
        _ = runiq.rag.RagChunk


def test_all_imports_are_exported(face: ModuleType) -> None:
    """Every public class or function the face re-exports from runiq's own modules is listed in __all__."""
    reexported = sorted(
        name
        for name, value in _public_members(face).items()
        if (inspect.isclass(value) or inspect.isfunction(value))
        and getattr(value, "__module__", "").startswith("runiq.")
    )
    missing = [name for name in reexported if name not in face.__all__]
    assert missing == []


def test_nothing_else_public_leaks_onto_the_face(face: ModuleType) -> None:
    """Apart from submodules (and the ``annotations`` future import), a face's public names are __all__."""
    extras = {
        name
        for name, value in _public_members(face).items()
        if not inspect.ismodule(value) and name not in face.__all__ and name != "annotations"
    }
    assert extras == set()


def test_all_names_are_public_and_come_from_runiq(face: ModuleType) -> None:
    """__all__ has no private names, and each class or function in it is defined inside runiq."""
    for name in face.__all__:
        assert not name.startswith("_")
        value = getattr(face, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__.startswith("runiq."), name


def test_every_submodule_imports() -> None:
    """Each runiq.rag submodule imports on its own (no import cycles hidden by the package order)."""
    names = [info.name for info in pkgutil.walk_packages(runiq.rag.__path__, prefix="runiq.rag.")]
    assert "runiq.rag._registration.builder" in names
    for name in names:
        importlib.import_module(name)


def test_documented_names_are_public() -> None:
    """The names DESIGN.md promises for runiq.rag are all exported; the hook marker is the providers' face."""
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
    }
    assert promised <= set(runiq.rag.__all__)
    assert {"hookimpl", "ProviderRegistry", "VectorStore", "EmbeddingClient"} <= set(runiq.rag.providers.__all__)


def test_a_face_loads_names_on_first_use() -> None:
    """Importing the hook marker from the providers' face does not load the RAG core (a plugin's entry module)."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom runiq.rag.providers import hookimpl\n"
        "print(sorted(m for m in sys.modules if m.startswith('runiq.rag.') and m != 'runiq.rag.providers'))"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert shown.strip() == "['runiq.rag._lazy']"
