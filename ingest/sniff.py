"""Decide what a file is from its content, never from its name: each registered format
(ingest/formats/) recognises its own signatures."""

from __future__ import annotations

from ingest.errors import EmptyFile, UnsupportedType
from ingest.formats import FORMATS, SUPPORTED
from ingest.loaders import FileType


def sniff(data: bytes) -> FileType:
    """The type of the first format that recognises `data` (EmptyFile, UnsupportedType)."""
    if not data:
        raise EmptyFile("the file is empty (0 bytes)")
    for loader in FORMATS:
        if (ftype := loader.sniff(data)) is not None:
            return ftype
    raise UnsupportedType(f"unsupported file type; Carta accepts {SUPPORTED}")
