"""Decide what a file is from its first bytes, never from its name."""

from __future__ import annotations

from dataclasses import dataclass

from ingest.errors import EmptyFile, UnsupportedType


@dataclass(frozen=True)
class FileType:
    mime: str
    kind: str  # "pdf" or "image"


_SIGNATURES: list[tuple[bytes, FileType]] = [
    (b"%PDF-", FileType("application/pdf", "pdf")),
    (b"\x89PNG\r\n\x1a\n", FileType("image/png", "image")),
    (b"\xff\xd8\xff", FileType("image/jpeg", "image")),
    (b"II*\x00", FileType("image/tiff", "image")),
    (b"MM\x00*", FileType("image/tiff", "image")),
]

SUPPORTED = "PDF, PNG, JPEG, TIFF or WebP"


def sniff(data: bytes) -> FileType:
    if not data:
        raise EmptyFile("the file is empty (0 bytes)")
    head = data[:1024]
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return FileType("image/webp", "image")
    # PDFs may carry a little junk before the header; the spec allows it within 1 KiB.
    if b"%PDF-" in head:
        return FileType("application/pdf", "pdf")
    for magic, ftype in _SIGNATURES:
        if head.startswith(magic):
            return ftype
    raise UnsupportedType(f"unsupported file type; Carta accepts {SUPPORTED}")
