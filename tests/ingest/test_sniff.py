"""File types are decided from content, never from the name."""

from __future__ import annotations

import io
import random
import zipfile

import pytest

from ingest.errors import EmptyFile, IngestError, UnsupportedType
from ingest.sniff import sniff
from tests.utils.documents import image_bytes, make_pdf


def _image_bytes(fmt: str) -> bytes:
    return image_bytes(8, 6, color=(200, 30, 30), fmt=fmt)


def _pdf_bytes() -> bytes:
    return make_pdf(["Olá"])


@pytest.mark.parametrize(
    ("make", "mime", "kind"),
    [
        (_pdf_bytes, "application/pdf", "pdf"),
        (lambda: _image_bytes("PNG"), "image/png", "image"),
        (lambda: _image_bytes("JPEG"), "image/jpeg", "image"),
        (lambda: _image_bytes("TIFF"), "image/tiff", "image"),
        (lambda: _image_bytes("WEBP"), "image/webp", "image"),
    ],
    ids=["pdf", "png", "jpeg", "tiff", "webp"],
)
def test_detects_real_files_by_content(make, mime: str, kind: str) -> None:
    ftype = sniff(make())
    assert (ftype.mime, ftype.kind) == (mime, kind)


def test_big_endian_tiff_is_detected() -> None:
    # Pillow writes little-endian TIFF; a big-endian header must be recognised too.
    assert sniff(b"MM\x00*" + b"\x00" * 64).mime == "image/tiff"


def test_pdf_header_after_leading_junk_is_still_a_pdf() -> None:
    # The PDF spec tolerates bytes before the header (within the first KiB).
    assert sniff(b"\r\n\x00junk" + _pdf_bytes()).kind == "pdf"


def test_pdf_header_beyond_first_kib_is_not_a_pdf() -> None:
    with pytest.raises(UnsupportedType):
        sniff(b"x" * 2048 + _pdf_bytes())


def test_riff_that_is_not_webp_is_refused() -> None:
    # A WAV file is RIFF too; only RIFF....WEBP counts as an image.
    with pytest.raises(UnsupportedType):
        sniff(b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00" * 32)


def test_zero_bytes_is_empty_file() -> None:
    with pytest.raises(EmptyFile) as info:
        sniff(b"")
    assert isinstance(info.value, IngestError) and isinstance(info.value, ValueError)
    assert "empty" in str(info.value)


def _zip_bytes() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("doc.txt", "conteúdo")
    return buf.getvalue()


@pytest.mark.parametrize(
    "data",
    [
        "Relatório de enchentes 2024\nsó texto, nada de PDF".encode(),
        _zip_bytes(),
        # A DOCX/XLSX is a zip too.
        b"PK\x03\x04" + b"\x00" * 100,
        random.Random(7).randbytes(4096),
        b"GIF89a" + b"\x00" * 32,
    ],
    ids=["text", "zip", "zip-header", "bytes", "gif"],
)
def test_unsupported_content_is_refused_with_415(data: bytes) -> None:
    with pytest.raises(UnsupportedType) as info:
        sniff(data)
    assert type(info.value) is UnsupportedType
    # The message tells the user what is accepted.
    for fmt in ("PDF", "PNG", "JPEG", "TIFF", "WebP"):
        assert fmt in str(info.value)
