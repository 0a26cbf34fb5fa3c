"""The contract every :class:`~runiq.rag._loaders.DocumentLoader` passes (the built-in ones do too).

Subclass it and override three fixtures: ``loader``, ``sample`` (the bytes of a small valid file of the
format, made in the test) and ``expected_text`` (words the loaded text must contain)::

    class TestRstLoader(LoaderContract):
        @pytest.fixture
        def loader(self):
            return RstLoader()

        @pytest.fixture
        def sample(self):
            return "Title\\n=====\\n\\nSome words.\\n".encode()

        @pytest.fixture
        def expected_text(self):
            return ["Title", "Some words."]

Override ``malformed_samples`` to add the format's own hostile inputs (a truncated archive, an
encrypted file); each must load or fail with :class:`~runiq.rag._loaders.DocumentLoadError`, and no
failure may carry the input's content.
"""

from __future__ import annotations

import importlib
import pickle

import pytest

from runiq.rag._loaders.base import PAGE_BREAK, DocumentLoader, LoadedDocument, LoadOptions
from runiq.rag._loaders.errors import DocumentLoadError, LoadFailureCode
from runiq.rag._loaders.registry import LoaderRegistry
from runiq.rag.testing.fakes import CANARY

__all__ = ["LoaderContract"]

OPTIONS = LoadOptions()


class LoaderContract:
    """Override ``loader``, ``sample`` and ``expected_text``; optionally ``malformed_samples``."""

    @pytest.fixture
    def loader(self) -> DocumentLoader:
        raise NotImplementedError("override the 'loader' fixture")

    @pytest.fixture
    def sample(self) -> bytes:
        raise NotImplementedError("override the 'sample' fixture")

    @pytest.fixture
    def expected_text(self) -> list[str]:
        raise NotImplementedError("override the 'expected_text' fixture")

    @pytest.fixture
    def malformed_samples(self, sample: bytes) -> list[bytes]:
        """Truncated, garbage and empty input, each carrying the canary where it can."""
        return [
            sample[: len(sample) // 2],
            sample[: len(sample) // 2] + CANARY.encode(),
            bytes(range(256)) * 4 + CANARY.encode(),
            b"",
        ]

    def test_registers_with_valid_claims(self, loader: DocumentLoader) -> None:
        """A fresh registry accepts it: a trimmed name, lower-case '.ext' claims, 'type/subtype' media types,
        picklable, and not defined in __main__."""
        registry = LoaderRegistry()
        registry.add(loader)
        assert loader.extensions
        for extension in loader.extensions:
            assert registry.for_path(f"Some File{extension.upper()}") is loader

    def test_its_class_is_importable_by_name(self, loader: DocumentLoader) -> None:
        """A worker process unpickles the loader, so its class must be reachable by module and name."""
        cls = type(loader)
        module = importlib.import_module(cls.__module__)
        assert getattr(module, cls.__qualname__) is cls
        assert pickle.loads(pickle.dumps(loader)).name == loader.name  # noqa: S301 - our own bytes

    def test_loads_the_sample(self, loader: DocumentLoader, sample: bytes, expected_text: list[str]) -> None:
        document = loader.load(sample, options=OPTIONS)
        assert isinstance(document, LoadedDocument)
        assert document.text.strip()
        for words in expected_text:
            assert words in document.text
        assert isinstance(document.content_type, str)
        assert document.content_type

    def test_pages_and_headings_lie_inside_the_text(self, loader: DocumentLoader, sample: bytes) -> None:
        """Page n starts after n - 1 form feeds (the chunkers' page rule) and no page contains one."""
        document = loader.load(sample, options=OPTIONS)
        for page in document.pages:
            assert document.text.count(PAGE_BREAK, 0, page.start) + 1 == page.number
            assert PAGE_BREAK not in document.text[page.start : page.end]
        for heading in document.headings:
            assert heading.title.strip()
            assert 0 <= heading.start <= len(document.text)

    def test_is_deterministic_and_survives_the_trip_to_a_worker(self, loader: DocumentLoader, sample: bytes) -> None:
        first = loader.load(sample, options=OPTIONS)
        assert loader.load(sample, options=OPTIONS) == first
        assert pickle.loads(pickle.dumps(loader)).load(sample, options=OPTIONS) == first  # noqa: S301

    def test_malformed_input_loads_or_fails_with_a_code(
        self, loader: DocumentLoader, malformed_samples: list[bytes]
    ) -> None:
        """No other exception escapes, and no failure carries the input (message, cause or context)."""
        for data in malformed_samples:
            outcome = _outcome(loader, data)
            if isinstance(outcome, DocumentLoadError):
                assert isinstance(outcome.code, LoadFailureCode)
                assert outcome.__cause__ is None
                assert outcome.__context__ is None
                assert CANARY not in f"{outcome} {outcome!r} {outcome.args}"
            else:
                assert isinstance(outcome, LoadedDocument)


def _outcome(loader: DocumentLoader, data: bytes) -> LoadedDocument | DocumentLoadError:
    try:
        return loader.load(data, options=OPTIONS)
    except DocumentLoadError as error:
        return error
