"""Chunks from layout blocks: neighbouring blocks are merged up to a size, long blocks
are split at sentence ends; each chunk keeps its page and the union of its boxes."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ingest.loaders import BBox, TextBlock

_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")


@dataclass
class Chunk:
    page_no: int
    index: int  # position on the page
    text: str
    bbox: BBox
    table: dict | None = None  # cell grid of a chunk cut from a table (index/payloads.py)


def _union(a: BBox, b: BBox) -> BBox:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def _split_long(block: TextBlock, max_chars: int) -> list[TextBlock]:
    if len(block.text) <= max_chars:
        return [block]
    parts: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(block.text):
        while len(sentence) > max_chars:  # a "sentence" longer than a chunk: cut at a space
            cut = sentence.rfind(" ", 0, max_chars)
            cut = cut if cut > max_chars // 2 else max_chars
            head, sentence = sentence[:cut], sentence[cut:].lstrip()
            if current:
                parts.append(current)
                current = ""
            parts.append(head)
        if current and len(current) + 1 + len(sentence) > max_chars:
            parts.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}".strip()
    if current:
        parts.append(current)
    return [TextBlock(block.bbox, p) for p in parts]


def chunk_page(page_no: int, blocks: list[TextBlock], max_chars: int) -> list[Chunk]:
    chunks: list[Chunk] = []
    text, bbox = "", None
    for block in (piece for b in blocks for piece in _split_long(b, max_chars)):
        if bbox is not None and len(text) + 1 + len(block.text) > max_chars:
            chunks.append(Chunk(page_no, len(chunks), text, bbox))
            text, bbox = "", None
        text = f"{text}\n{block.text}" if text else block.text
        bbox = block.bbox if bbox is None else _union(bbox, block.bbox)
    if bbox is not None:
        chunks.append(Chunk(page_no, len(chunks), text, bbox))
    return chunks
