"""Erasure that erases, and the scan that proves it.

A document delete is an erasure request: its text, title, filename and metadata must be in
no file under the data dir once `Carta.delete` returns. Removing rows and points is not
enough: the vector engine keeps deleted payloads in its segments and WAL, SQLite keeps old
page images in its WAL (see `index/edge_store.py` and `index/sqlite.py` for what each
store does about it). The delete is made durable by `ErasureJournal`: the request is
written (fsync) before anything is removed and cleared when every store has erased, so a
crash in between (after which the engine's WAL replay even writes new copies of the
payloads) is finished at the next start.

`scan` reads every byte of the data dir, as stored and decoded: the engine's payload
pages are LZ4 blocks (lz4_flex's size-prefixed block format at 128-byte aligned offsets),
in which back-references split a marker, so they are decoded; zlib/gzip streams too.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from index.edge_store import is_held

JOURNAL_NAME = "erasure-pending.json"
# files that keep document ids (never text) by design: the audit log records who deleted what
KEEPS_IDS = ("audit.sqlite3", "audit.sqlite3-wal")
_ALIGN = 128  # gridstore block size: every stored value starts on a block boundary
_MAX_BLOCK = 1 << 20  # the largest decoded value the scan tries (payloads are far smaller)
_WINDOW = 64 << 20  # files are read in windows this large ...
_OVERLAP = 2 << 20  # ... overlapping by this much, so a block or marker across a border is seen


class ErasureJournal:
    """The erasure requests not yet finished, as `[[tenant, doc_id], ...]` in one JSON file
    written atomically and fsynced (ids only, like the audit log)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def pending(self) -> list[tuple[str, str]]:
        try:
            return [(t, d) for t, d in json.loads(self.path.read_text())]
        except FileNotFoundError:
            return []

    def add(self, tenant: str, doc_id: str) -> None:
        with self._lock:
            entries = self.pending()
            if (tenant, doc_id) not in entries:
                self._write([*entries, (tenant, doc_id)])

    def remove(self, tenant: str, doc_id: str) -> None:
        with self._lock:
            entries = self.pending()
            if (tenant, doc_id) in entries:
                self._write([e for e in entries if e != (tenant, doc_id)])

    def _write(self, entries: list[tuple[str, str]]) -> None:
        if not entries:
            self.path.unlink(missing_ok=True)
        else:
            tmp = self.path.with_suffix(".tmp")
            with open(tmp, "w") as fh:
                json.dump([list(e) for e in entries], fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        folder = os.open(self.path.parent, os.O_RDONLY)  # the rename or unlink itself must survive
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


# ------------------------------------------------------------------------------- scan


def _lz4_length(src: bytes | memoryview, i: int, length: int, what: str) -> tuple[int, int]:
    """A length whose 4-bit field is full (15): each byte from `i` adds to it, up to and
    including the first that is not 255. The length, and where the sequence goes on."""
    while True:
        if i >= len(src):
            raise ValueError(f"truncated {what} length")
        b = src[i]
        i += 1
        length += b
        if b != 255:
            return length, i


def lz4_block_decompress(src: bytes | memoryview, size: int) -> bytes:
    """Decode one LZ4 block that decodes to exactly `size` bytes; ValueError otherwise
    (the scan tries every aligned offset, so most inputs are not blocks at all)."""
    dst = bytearray()
    i, n = 0, len(src)
    while i < n:
        token = src[i]
        i += 1
        literals = token >> 4
        if literals == 15:
            literals, i = _lz4_length(src, i, literals, "literal")
        if i + literals > n or len(dst) + literals > size:
            raise ValueError("literals past the end")
        dst += src[i : i + literals]
        i += literals
        if len(dst) == size:  # the last sequence has literals only
            return bytes(dst)
        if i + 2 > n:
            raise ValueError("truncated match offset")
        offset = src[i] | (src[i + 1] << 8)
        i += 2
        if offset == 0 or offset > len(dst):
            raise ValueError("match offset out of range")
        length = (token & 15) + 4
        if (token & 15) == 15:
            length, i = _lz4_length(src, i, length, "match")
        if len(dst) + length > size:
            raise ValueError("match past the end")
        start = len(dst) - offset
        if offset >= length:
            dst += dst[start : start + length]
        else:  # overlapping copy: a run repeating the last `offset` bytes
            for k in range(length):
                dst.append(dst[start + k])
        if len(dst) == size:
            return bytes(dst)
    raise ValueError("block ended early")


def _lz4_blocks(data: memoryview) -> Iterator[bytes]:
    """Every decodable value at a 128-byte aligned offset: u32 LE decoded size, then a block."""
    blocks = len(data) // _ALIGN
    if blocks == 0:
        return
    heads = np.frombuffer(data[: blocks * _ALIGN], dtype=np.uint8).reshape(blocks, _ALIGN)[:, :4]
    sizes = np.ascontiguousarray(heads).view("<u4").ravel()  # (blocks,)
    for block in np.nonzero((sizes > 4) & (sizes < _MAX_BLOCK))[0]:
        offset, size = int(block) * _ALIGN, int(sizes[block])
        try:  # a block is at most size + size/255 + 16 bytes long
            yield lz4_block_decompress(data[offset + 4 : offset + 4 + size + size // 255 + 16], size)
        except (ValueError, IndexError):
            continue


def _zlib_streams(data: memoryview, end: int | None = None) -> Iterator[bytes]:
    """Every zlib or gzip stream that starts before `end` (default: the end of `data`)."""
    raw = data.obj if isinstance(data.obj, bytes) else bytes(data)
    end = len(raw) if end is None else end
    for magic, wbits in ((b"\x78\x9c", 15), (b"\x78\x01", 15), (b"\x78\xda", 15), (b"\x1f\x8b", 31)):
        at = raw.find(magic, 0, end)
        while at >= 0:
            try:
                decoded = zlib.decompressobj(wbits).decompress(data[at : at + _MAX_BLOCK], 4 * _MAX_BLOCK)
            except zlib.error:
                decoded = b""
            if decoded:
                yield decoded
            at = raw.find(magic, at + 1, end)


@dataclass
class FileHits:
    """How often one marker occurs in one file: as stored, in LZ4 blocks, in zlib streams."""

    path: str  # relative to the data dir
    marker: str
    raw: int = 0
    lz4: int = 0
    zlib: int = 0

    @property
    def total(self) -> int:
        return self.raw + self.lz4 + self.zlib


def _windows(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as fh:
        start = 0
        while True:
            fh.seek(start)
            chunk = fh.read(_WINDOW + _OVERLAP)
            if chunk:
                yield chunk
            if len(chunk) <= _OVERLAP or len(chunk) < _WINDOW + _OVERLAP:
                return
            start += _WINDOW  # a multiple of 128: windows keep the block alignment


def scan_file(path: Path, markers: Sequence[bytes], rel: str) -> list[FileHits]:
    """The markers found in one file (files over 64 MiB are read in overlapping windows, so
    a hit inside an overlap may count twice; zero is exact)."""
    hits = {m: FileHits(rel, m.decode("utf-8", "replace")) for m in markers}
    for chunk in _windows(path):
        view = memoryview(chunk)
        # stores preallocate their files: a tail of zeros holds no marker and starts no
        # stream (a stream that runs into it is still decoded whole)
        end = len(chunk.rstrip(b"\0"))
        for m in markers:
            hits[m].raw += chunk.count(m, 0, end)
        for decoded in _lz4_blocks(view):
            for m in markers:
                hits[m].lz4 += decoded.count(m)
        for decoded in _zlib_streams(view, end):
            for m in markers:
                hits[m].zlib += decoded.count(m)
    return [h for h in hits.values() if h.total]


@dataclass
class Verification:
    """What `carta erase --verify` found: `hits` fail it; `kept_by_design` does not."""

    doc_id: str
    data_dir: str
    markers: list[str]
    files_scanned: int = 0
    bytes_scanned: int = 0
    hits: list[FileHits] = field(default_factory=list)
    kept_by_design: list[FileHits] = field(default_factory=list)
    registered_in: list[str] = field(default_factory=list)  # tenants whose registry still lists the id
    erasure_pending: bool = False
    held_by_server: bool = False

    @property
    def clean(self) -> bool:
        return not self.hits and not self.erasure_pending

    def to_dict(self) -> dict[str, object]:
        body = asdict(self)
        body["clean"] = self.clean
        return body


def _registered_in(data_dir: Path, doc_id: str) -> list[str]:
    path = data_dir / "registry.sqlite3"
    if not path.exists():
        return []
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [r[0] for r in conn.execute("SELECT DISTINCT tenant FROM documents WHERE id=?", (doc_id,))]
    except sqlite3.Error:
        return []
    finally:
        conn.close()


def verify(data_dir: Path, doc_id: str, markers: Sequence[str] = ()) -> Verification:
    """Scan every file under `data_dir` for the document id and `markers` (UTF-8)."""
    needles = [doc_id.encode(), *(m.encode() for m in markers if m)]
    result = Verification(doc_id, str(data_dir), [n.decode() for n in needles])
    qdrant = data_dir / "qdrant"
    result.held_by_server = qdrant.is_dir() and any(is_held(p) for p in qdrant.iterdir() if p.is_dir())
    result.registered_in = _registered_in(data_dir, doc_id)
    journal = ErasureJournal(data_dir / JOURNAL_NAME)
    result.erasure_pending = any(d == doc_id for _, d in journal.pending())
    for folder, _, files in os.walk(data_dir):
        for name in sorted(files):
            path = Path(folder) / name
            rel = str(path.relative_to(data_dir))
            try:
                found = scan_file(path, needles, rel)
                result.bytes_scanned += path.stat().st_size
            except OSError:  # vanished while scanning (a temp file)
                continue
            result.files_scanned += 1
            for hit in found:
                by_design = name in KEEPS_IDS and hit.marker == doc_id
                (result.kept_by_design if by_design else result.hits).append(hit)
    return result
