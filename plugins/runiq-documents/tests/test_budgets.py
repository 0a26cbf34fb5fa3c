"""Hostile files through a real LoaderPool: each fails with its code well within its time budget, and
the pool goes on serving. The loaders are unpickled by a fresh interpreter, as in production."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from types import SimpleNamespace

import pytest
import pytest_asyncio

from runiq.rag._loaders import DocumentLoader, DocumentLoadError, LoadBudget, LoaderPool, LoadFailureCode, LoadOptions
from runiq_documents import DocxLoader, PdfLoader
from runiq_documents.samples import pdf_bytes

pytestmark = pytest.mark.asyncio(loop_scope="module")

TIMEOUT = 10.0
BOMB_OPTIONS = LoadOptions(max_unpacked_bytes=32 * 1024 * 1024)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool() -> AsyncIterator[LoaderPool]:
    async with LoaderPool(LoadBudget(timeout_seconds=TIMEOUT, max_memory_bytes=1024**3), workers=1) as pool:
        await pool.start()
        yield pool


@pytest.mark.parametrize(
    ("loader", "make", "code"),
    [
        pytest.param(
            DocxLoader(), lambda h: h.zip_bomb_docx(64 * 1024**2), LoadFailureCode.TOO_LARGE, id="zip-bomb-docx"
        ),
        pytest.param(DocxLoader(), lambda h: h.billion_laughs_docx(), LoadFailureCode.MALFORMED, id="billion-laughs"),
        pytest.param(PdfLoader(), lambda h: h.flate_bomb_pdf(128 * 1024**2), LoadFailureCode.TOO_LARGE, id="pdf-bomb"),
        pytest.param(PdfLoader(), lambda h: pdf_bytes(["Leave"])[:300], LoadFailureCode.MALFORMED, id="truncated-pdf"),
        pytest.param(
            PdfLoader(),
            lambda h: h.encrypted_pdf(pdf_bytes(["x"]), user="u", owner="o", algorithm="AES-256"),
            LoadFailureCode.ENCRYPTED,
            id="encrypted-pdf",
        ),
        pytest.param(PdfLoader(), lambda h: pdf_bytes(["", ""]), LoadFailureCode.EMPTY, id="scanned-pdf"),
    ],
)
async def test_a_hostile_file_fails_with_its_code_within_its_budget(
    pool: LoaderPool,
    hostile: SimpleNamespace,
    loader: DocumentLoader,
    make: Callable[[SimpleNamespace], bytes],
    code: LoadFailureCode,
) -> None:
    data = make(hostile)
    started = time.monotonic()
    with pytest.raises(DocumentLoadError) as caught:
        await pool.load(loader, data, options=BOMB_OPTIONS)
    elapsed = time.monotonic() - started
    assert caught.value.code is code
    assert elapsed < TIMEOUT / 2  # refused by a check, not by the clock
    loaded = await pool.load(PdfLoader(), pdf_bytes(["Next file", "page two"]))
    assert loaded.text == "Next file\fpage two"
