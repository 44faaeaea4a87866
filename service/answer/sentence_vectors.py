"""Sentence vectors computed at ingestion, so /v1/ask embeds no evidence sentence per question.

The relevance gate (service/answer/gate.py) scores each candidate sentence by the cosine of
its embedding with the question's. Embedding up to 32 sentences per question was most of an
extractive answer's time, yet every sentence of a chunk is known once the chunk is stored:
its vector is computed then, from the chunk texts of a ready document, and kept in
data_dir/sentence_vectors.sqlite3.

Rows are keyed by content: the SHA-256 of the text model's slug and the exact text the gate
embeds. A stored vector is therefore the vector the gate would compute, nothing goes stale,
and a text the store lacks (a data dir from before this store, a document still being
indexed, a sentence split the gate has since changed) is embedded on the fly as before.
Each row also names its (tenant, doc_id), so erasing a document erases its vectors
(secure_delete, then a checkpoint by Carta's erasure).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from index.sqlite import connect, migrate, transaction
from models.text_encoder import TextEncoder
from service.answer.sentences import EMBED_CHARS, in_encoder_language, sentences

MIN_SENTENCE_CHARS = 12  # the gate's candidates: shorter pieces are not scored
MAX_SENTENCE_CHARS = 600  # ...and longer ones are cut here before the gate cuts them to EMBED_CHARS

_MIGRATIONS = [
    """
    CREATE TABLE IF NOT EXISTS sentence_vectors (
        key     BLOB NOT NULL,   -- sha256(model slug, text embedded)
        tenant  TEXT NOT NULL,
        doc_id  TEXT NOT NULL,
        vector  BLOB NOT NULL,   -- float32, L2-normalised
        PRIMARY KEY (key, tenant, doc_id)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS sentence_vectors_doc ON sentence_vectors (tenant, doc_id);
    """,
]
_LOOKUP_BATCH = 500  # keys per SELECT (SQLite's bound-parameter limit is 999 on old builds)


def embedded_texts(chunk_text: str, table: bool = False, encoder_language: str | None = None) -> list[str]:
    """The texts the gate embeds for one chunk's sentences (RelevanceGate._candidates, then
    its EMBED_CHARS cut), in order, duplicates kept; a table chunk's lines stay lines. With
    the encoder's language, each one's translation into it follows, when the chunk is
    written in another (sentences.in_encoder_language)."""
    out = []
    for sentence in sentences(chunk_text, table=table):
        if len(sentence) >= MIN_SENTENCE_CHARS:
            text = sentence[:MAX_SENTENCE_CHARS][:EMBED_CHARS]
            out.append(text)
            if translated := in_encoder_language(text, chunk_text, encoder_language):
                out.append(translated)
    return out


class SentenceVectors:
    """Stored sentence vectors, with the text encoder for the ones not stored."""

    def __init__(self, path: Path, text: TextEncoder, text_language: str | None = None) -> None:
        self.path = path
        self.text = text
        self.text_language = text_language  # the gate's: sentences in another are stored translated too
        self._conn = connect(path, synchronous="NORMAL", named_rows=False)  # rebuildable from chunks
        self._lock = threading.Lock()
        migrate(self._conn, _MIGRATIONS)
        self.hits = 0  # texts found stored (a benchmark reads these)
        self.misses = 0  # texts embedded on the fly

    def key(self, text: str) -> bytes:
        """The content key of a text embedded by this model."""
        return hashlib.sha256(f"{self.text.slug}\x00{text}".encode()).digest()

    def embed(self, texts: list[str]) -> np.ndarray:
        """The vectors of `texts`, shape (len(texts), dim): stored ones read, the rest
        embedded now (the gate's drop-in for TextEncoder.embed)."""
        keys = [self.key(t) for t in texts]
        found = self._lookup(keys)
        missing = [i for i, k in enumerate(keys) if k not in found]
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        out = np.zeros((len(texts), self.text.dim), dtype=np.float32)
        for i, k in enumerate(keys):
            if k in found:
                out[i] = found[k]
        if missing:
            out[missing] = self.text.embed([texts[i] for i in missing])
        return out

    def add_document(
        self,
        tenant: str,
        doc_id: str,
        chunks: Iterable[tuple[str, bool]],
        wanted: Callable[[], bool] | None = None,
        slice_size: int | None = None,
    ) -> int:
        """Store the vector of every sentence of a document's chunks ((text, is a table) each;
        a table's lines stay lines, as the gate splits them); returns how many texts
        were embedded (those another document already holds are copied, not embedded).
        `wanted`: asked under the store's lock before the rows are written (False: the
        document was erased meanwhile, nothing is stored); `slice_size`: embed that many
        texts per call on the small-call runtime (service/answer/sentence_filler.py), else
        all in one bulk call."""
        texts = list(
            dict.fromkeys(
                t for text, table in chunks for t in embedded_texts(text, table, self.text_language)
            )
        )
        keys = [self.key(t) for t in texts]
        known = self._lookup(keys)
        todo = [i for i, k in enumerate(keys) if k not in known]
        vectors = dict(known)
        for i, vec in zip(todo, self._embed([texts[i] for i in todo], slice_size), strict=True):
            vectors[keys[i]] = vec
        rows = [(k, tenant, doc_id, np.asarray(vectors[k], dtype=np.float32).tobytes()) for k in keys]
        with self._lock, transaction(self._conn):
            if wanted is not None and not wanted():
                return 0
            self._conn.executemany("INSERT OR REPLACE INTO sentence_vectors VALUES (?, ?, ?, ?)", rows)
        return len(todo)

    def _embed(self, texts: list[str], slice_size: int | None) -> list[np.ndarray]:
        if not texts:
            return []
        if slice_size is None:
            return list(self.text.embed(texts, bulk=True))
        out: list[np.ndarray] = []
        for start in range(0, len(texts), slice_size):
            out.extend(self.text.embed(texts[start : start + slice_size], bulk=False))
        return out

    def has_document(self, tenant: str, doc_id: str) -> bool:
        """Whether the document's vectors are stored (a data dir from before has none)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT 1 FROM sentence_vectors WHERE tenant=? AND doc_id=? LIMIT 1", (tenant, doc_id)
            ).fetchone()
        return row is not None

    def delete_document(self, tenant: str, doc_id: str) -> None:
        """Erase a document's vectors (an erasure hook of Carta)."""
        with self._lock:
            self._conn.execute("DELETE FROM sentence_vectors WHERE tenant=? AND doc_id=?", (tenant, doc_id))

    def count(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM sentence_vectors").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _lookup(self, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(unique), _LOOKUP_BATCH):
                batch = unique[start : start + _LOOKUP_BATCH]
                marks = ",".join("?" * len(batch))
                for key, blob in self._conn.execute(
                    f"SELECT key, vector FROM sentence_vectors WHERE key IN ({marks})", batch
                ):
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        return found
