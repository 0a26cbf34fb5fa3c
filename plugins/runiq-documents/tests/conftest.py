"""Hostile and protected files, built in memory, handed to the tests as the ``hostile`` fixture (test
modules run under --import-mode=importlib and cannot import each other)."""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from types import SimpleNamespace

import pytest
from pypdf import PdfReader, PdfWriter

from runiq_documents.samples import docx_bytes, pdf_bytes

DOCX = docx_bytes(
    title="Leave policy",
    author="Jane Doe",
    sections=[("Annual leave", ["Everyone gets 25 days.", "# Not a heading"]), ("Sick leave", ["Call in."])],
    table=[["Type", "Days"], ["Annual", "25"], ["Sick", ""]],
)


def encrypted_pdf(data: bytes, *, user: str, owner: str, algorithm: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user, owner_password=owner, algorithm=algorithm)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def flate_bomb_pdf(inflated_bytes: int) -> bytes:
    """A one-page PDF whose content stream inflates to ``inflated_bytes`` (about 1000:1)."""
    data = pdf_bytes(["bomb"])
    compressor = zlib.compressobj(1)
    chunk = b" " * (1024 * 1024)
    packed = compressor.compress(b"BT /F1 12 Tf 72 720 Td (bomb) Tj ET")
    packed += b"".join(compressor.compress(chunk) for _ in range(inflated_bytes // len(chunk)))
    packed += compressor.flush()
    stream = re.search(rb"4 0 obj\n<< /Length \d+ >>\nstream\n.*?\nendstream", data, re.DOTALL)
    assert stream is not None
    body = b"4 0 obj\n<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(packed), packed)
    return data[: stream.start()] + body + data[stream.end() :]


def rezip(data: bytes, replace: dict[str, bytes]) -> bytes:
    """The same package with some parts replaced (or added)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            target.writestr(item.filename, replace.pop(item.filename, source.read(item.filename)))
        for name, part in replace.items():
            target.writestr(name, part)
    return out.getvalue()


def zip_bomb_docx(inflated_bytes: int) -> bytes:
    """A valid DOCX plus a part of zeros that packs about 1000:1."""
    return rezip(DOCX, {"word/media/zeros.bin": bytes(inflated_bytes)})


BILLION_LAUGHS = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE w:document [\n <!ENTITY a "AAAAAAAAAA">\n'
    + b"".join(
        b' <!ENTITY %s "%s">\n' % (name, (b"&%s;" % previous) * 10)
        for previous, name in zip(
            [b"a", b"b", b"c", b"d", b"e", b"f", b"g", b"h"],
            [b"b", b"c", b"d", b"e", b"f", b"g", b"h", b"i"],
            strict=True,
        )
    )
    + b']>\n<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
    + b"<w:body><w:p><w:r><w:t>&i;</w:t></w:r></w:p></w:body></w:document>"
)


def billion_laughs_docx() -> bytes:
    return rezip(DOCX, {"word/document.xml": BILLION_LAUGHS})


@pytest.fixture
def hostile() -> SimpleNamespace:
    return SimpleNamespace(
        docx=DOCX,
        encrypted_pdf=encrypted_pdf,
        flate_bomb_pdf=flate_bomb_pdf,
        zip_bomb_docx=zip_bomb_docx,
        billion_laughs_docx=billion_laughs_docx,
    )
