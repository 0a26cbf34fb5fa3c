"""Every built-in loader passes the loader contract that plugin loaders are held to."""

from __future__ import annotations

import pytest

from runiq.rag._loaders import (
    CsvLoader,
    DocumentLoader,
    HtmlLoader,
    JsonLoader,
    MarkdownLoader,
    PlainTextLoader,
    TsvLoader,
)
from runiq.rag.testing import CANARY, LoaderContract


class TestPlainTextLoader(LoaderContract):
    @pytest.fixture
    def loader(self) -> DocumentLoader:
        return PlainTextLoader()

    @pytest.fixture
    def sample(self) -> bytes:
        return "Überblick\nPage one\fPage two".encode("cp1252")

    @pytest.fixture
    def expected_text(self) -> list[str]:
        return ["Überblick", "Page two"]


class TestMarkdownLoader(LoaderContract):
    @pytest.fixture
    def loader(self) -> DocumentLoader:
        return MarkdownLoader()

    @pytest.fixture
    def sample(self) -> bytes:
        return "# Policy\n\n## Scope\n\nEveryone — always.\n".encode()

    @pytest.fixture
    def expected_text(self) -> list[str]:
        return ["## Scope", "Everyone — always."]


class TestHtmlLoader(LoaderContract):
    @pytest.fixture
    def loader(self) -> DocumentLoader:
        return HtmlLoader()

    @pytest.fixture
    def sample(self) -> bytes:
        return b"<html><title>T</title><body><h1>Leave</h1><p>Twenty-five days.</p></body></html>"

    @pytest.fixture
    def expected_text(self) -> list[str]:
        return ["# Leave", "Twenty-five days."]


class TestJsonLoader(LoaderContract):
    @pytest.fixture
    def loader(self) -> DocumentLoader:
        return JsonLoader()

    @pytest.fixture
    def sample(self) -> bytes:
        return b'{"text": "Remote work three days a week.", "id": 7}'

    @pytest.fixture
    def expected_text(self) -> list[str]:
        return ["Remote work three days a week."]

    @pytest.fixture
    def malformed_samples(self, sample: bytes) -> list[bytes]:
        return [sample[:-1], f'{{"body": "{CANARY}"}}'.encode(), f'{{"text": {{"x": "{CANARY}"}}}}'.encode()]


class TestCsvLoader(LoaderContract):
    @pytest.fixture
    def loader(self) -> DocumentLoader:
        return CsvLoader()

    @pytest.fixture
    def sample(self) -> bytes:
        return b"City,Rate\nZurich,60\nBern,55\n"

    @pytest.fixture
    def expected_text(self) -> list[str]:
        return ["City: Zurich; Rate: 60", "City: Bern; Rate: 55"]


class TestTsvLoader(LoaderContract):
    @pytest.fixture
    def loader(self) -> DocumentLoader:
        return TsvLoader()

    @pytest.fixture
    def sample(self) -> bytes:
        return b"City\tRate\nZurich\t60\n"

    @pytest.fixture
    def expected_text(self) -> list[str]:
        return ["City: Zurich; Rate: 60"]
