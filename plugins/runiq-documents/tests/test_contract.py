"""Each loader of the distribution passes runiq's loader contract, with its format's hostile inputs."""

from __future__ import annotations

import datetime as dt

import pytest

from runiq.rag._loaders import DocumentLoader
from runiq.rag.testing import CANARY, LoaderContract
from runiq_documents import DocxLoader, PdfLoader, PptxLoader, XlsxLoader
from runiq_documents.samples import docx_bytes, pdf_bytes, pptx_bytes, xlsx_bytes


def _hostile(sample: bytes) -> list[bytes]:
    return [sample[: len(sample) // 2], sample[:-200], sample + CANARY.encode(), CANARY.encode() * 50, b"PK\x03\x04"]


class TestPdfLoader(LoaderContract):
    @pytest.fixture
    def loader(self) -> DocumentLoader:
        return PdfLoader()

    @pytest.fixture
    def sample(self) -> bytes:
        return pdf_bytes(["Annual leave is 25 days.", f"Sick leave {CANARY}"], title="Leave", author="HR")

    @pytest.fixture
    def expected_text(self) -> list[str]:
        return ["Annual leave is 25 days.", "Sick leave"]

    @pytest.fixture
    def malformed_samples(self, sample: bytes) -> list[bytes]:
        return _hostile(sample)


class TestDocxLoader(LoaderContract):
    @pytest.fixture
    def loader(self) -> DocumentLoader:
        return DocxLoader()

    @pytest.fixture
    def sample(self) -> bytes:
        return docx_bytes(
            title="Leave", author="HR", sections=[("Annual", [f"25 days {CANARY}"])], table=[["a", "b"], ["1", "2"]]
        )

    @pytest.fixture
    def expected_text(self) -> list[str]:
        return ["# Annual", "25 days", "a: 1; b: 2"]

    @pytest.fixture
    def malformed_samples(self, sample: bytes) -> list[bytes]:
        return _hostile(sample)


class TestPptxLoader(LoaderContract):
    @pytest.fixture
    def loader(self) -> DocumentLoader:
        return PptxLoader()

    @pytest.fixture
    def sample(self) -> bytes:
        return pptx_bytes(title="Kickoff", author="PMO", slides=[("Goals", ["Ship v1"], CANARY), ("Plan", ["Q1"], "")])

    @pytest.fixture
    def expected_text(self) -> list[str]:
        return ["# Goals", "Ship v1", "# Plan"]

    @pytest.fixture
    def malformed_samples(self, sample: bytes) -> list[bytes]:
        return _hostile(sample)


class TestXlsxLoader(LoaderContract):
    @pytest.fixture
    def loader(self) -> DocumentLoader:
        return XlsxLoader()

    @pytest.fixture
    def sample(self) -> bytes:
        rows = [["City", "Rate", "Since"], ["Zürich", 60, dt.date(2024, 1, 1)], [CANARY, 1, None]]
        return xlsx_bytes(title="Rates", author="Finance", sheets={"Per diem": rows})

    @pytest.fixture
    def expected_text(self) -> list[str]:
        return ["# Per diem", "City: Zürich; Rate: 60; Since: 2024-01-01"]

    @pytest.fixture
    def malformed_samples(self, sample: bytes) -> list[bytes]:
        return _hostile(sample)
