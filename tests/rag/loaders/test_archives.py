"""open_zip: a zip-based document is refused before anything inflates when it could blow up."""

from __future__ import annotations

import io
import time
import zipfile

import pytest

from runiq.rag._loaders import DocumentLoadError, LoadFailureCode, LoadOptions, open_zip
from runiq.rag._loaders.archives import MAX_ZIP_MEMBERS

PART = b'<?xml version="1.0" encoding="UTF-8"?>\n<w:document xmlns:w="urn:x"><w:t>hi</w:t></w:document>'
BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<w:document xmlns:w="urn:x"><w:t>&lol3;</w:t></w:document>"""


def _zip(members: dict[str, bytes], *, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _code(data: bytes, options: LoadOptions | None = None) -> LoadFailureCode:
    with pytest.raises(DocumentLoadError) as caught:
        open_zip(data, options or LoadOptions())
    assert caught.value.__context__ is None
    return caught.value.code


def test_a_plain_package_opens() -> None:
    archive = open_zip(_zip({"[Content_Types].xml": PART, "word/document.xml": PART, "empty.xml": b""}), LoadOptions())
    assert archive.read("word/document.xml") == PART


def test_a_zip_bomb_is_too_large_before_it_inflates() -> None:
    """64 MiB of zeros packs into ~64 KiB; its declared size alone refuses it, in milliseconds."""
    bomb = _zip({"word/document.xml": PART, "word/media/zeros.bin": bytes(64 * 1024 * 1024)})
    assert len(bomb) < 256 * 1024
    started = time.monotonic()
    assert _code(bomb, LoadOptions(max_unpacked_bytes=16 * 1024 * 1024)) is LoadFailureCode.TOO_LARGE
    assert time.monotonic() - started < 1.0


def test_too_many_members_is_too_large() -> None:
    many = _zip({f"m{i}.bin": b"" for i in range(MAX_ZIP_MEMBERS + 1)}, compression=zipfile.ZIP_STORED)
    assert _code(many) is LoadFailureCode.TOO_LARGE


@pytest.mark.parametrize(
    "part",
    [
        BILLION_LAUGHS,
        BILLION_LAUGHS.replace(b"<?xml", b"<!-- " + b"x" * 70_000 + b" --><?xml"),  # DTD pushed past the window
        b'<!doctype x SYSTEM "file:///etc/passwd"><x/>',  # external entity fetch (XXE)
        b"\xff\xfe" + '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><x/>'.encode("utf-16-le"),
    ],
)
def test_an_xml_part_with_a_dtd_is_malformed(part: bytes) -> None:
    """Open Packaging Conventions forbid DTDs; refusing them stops entity bombs and XXE before any parser."""
    assert _code(_zip({"[Content_Types].xml": PART, "word/document.xml": part})) is LoadFailureCode.MALFORMED


def test_an_encrypted_office_file_is_encrypted() -> None:
    """Office stores a password-protected DOCX as an OLE compound file, not a zip."""
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(4096)
    assert _code(ole) is LoadFailureCode.ENCRYPTED


def test_an_encrypted_member_is_encrypted() -> None:
    data = bytearray(_zip({"word/document.xml": PART}, compression=zipfile.ZIP_STORED))
    for header in (b"PK\x03\x04", b"PK\x01\x02"):  # set the encryption bit in both headers
        at = data.index(header)
        flag_offset = at + (6 if header == b"PK\x03\x04" else 8)
        data[flag_offset] |= 0x1
    assert _code(bytes(data)) is LoadFailureCode.ENCRYPTED


@pytest.mark.parametrize("data", [b"", b"not a zip at all", _zip({"a.xml": PART})[:40]])
def test_not_a_zip_is_malformed(data: bytes) -> None:
    assert _code(data) is LoadFailureCode.MALFORMED
