"""Open a zip-based document (DOCX, PPTX, XLSX, ODF) only after checking it cannot blow up.

Checked from the central directory before anything is inflated: the member count, the total declared
unpacked size against ``LoadOptions.max_unpacked_bytes`` (Python's ``zipfile`` stops every member at
its declared size and verifies its CRC, so a member cannot inflate past what it declares), encrypted
members, and an OLE container in place of the zip (how Office stores a password-protected file). XML
parts must not declare a DTD: Open Packaging Conventions forbid it, and a DTD is what an entity
expansion bomb ("billion laughs") needs, so no XML parser in the chain ever sees one.
"""

from __future__ import annotations

import io
import re
import zipfile

from runiq.rag._loaders.base import LoadOptions
from runiq.rag._loaders.errors import DocumentLoadError, LoadFailureCode

__all__ = ["MAX_ZIP_MEMBERS", "open_zip"]

MAX_ZIP_MEMBERS = 10_000
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_XML_SUFFIXES = (".xml", ".rels", ".vml")
_PROLOG_BYTES = 64 * 1024  # a real part's prolog is a line; one longer than this is not a real part
_ROOT_START = re.compile(r"<[A-Za-z_]")
_DECLARATION = re.compile(r"<!(DOCTYPE|ENTITY)", re.IGNORECASE)


def open_zip(data: bytes, options: LoadOptions) -> zipfile.ZipFile:
    """The checked archive.

    Raises:
        DocumentLoadError: ``encrypted``, ``too_large`` or ``malformed``.
    """
    if data.startswith(_OLE_MAGIC):
        raise DocumentLoadError(LoadFailureCode.ENCRYPTED)
    archive = _opened(data)
    members = archive.infolist()
    if len(members) > MAX_ZIP_MEMBERS or sum(m.file_size for m in members) > options.max_unpacked_bytes:
        raise DocumentLoadError(LoadFailureCode.TOO_LARGE)
    if any(m.flag_bits & 0x1 for m in members):
        raise DocumentLoadError(LoadFailureCode.ENCRYPTED)
    for member in members:
        if member.filename.lower().endswith(_XML_SUFFIXES) and member.file_size and not _plain_prolog(archive, member):
            raise DocumentLoadError(LoadFailureCode.MALFORMED)
    return archive


def _opened(data: bytes) -> zipfile.ZipFile:
    failed = False
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError):
        failed = True
    assert failed
    raise DocumentLoadError(LoadFailureCode.MALFORMED)


def _plain_prolog(archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> bool:
    """True when the part's root element starts within the first 64 KiB with no DTD before it."""
    try:
        with archive.open(member) as stream:
            head = stream.read(_PROLOG_BYTES)
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError, RuntimeError):
        return False
    text = head.decode("utf-16", "ignore") if head.startswith((b"\xff\xfe", b"\xfe\xff")) else head.decode("latin-1")
    root = _ROOT_START.search(text)
    return root is not None and _DECLARATION.search(text, 0, root.start()) is None
