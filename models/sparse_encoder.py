"""BM25 sparse vectors for Portuguese and English, from the Qdrant engine's own BM25
(Snowball stemmers, stopwords, lowercasing, accent folding).

Two vectors per text, one per language, instead of guessing a language: a Portuguese
question then matches Portuguese stems ("enchentes" ~ "enchente") and an English one
English stems, whatever the language of the document. The store applies IDF.
"""

from __future__ import annotations

import qdrant_edge as E

# Snowball language -> named sparse vector in the chunk collection.
LANGUAGES = {"portuguese": "bm25_pt", "english": "bm25_en"}

SparseTerms = tuple[list[int], list[float]]  # (indices, values)


class SparseEncoder:
    def __init__(self, languages: dict[str, str] | None = None) -> None:
        self._models = {
            name: E.Bm25(E.Bm25Config(language=lang, lowercase=True, ascii_folding=True))
            for lang, name in (languages or LANGUAGES).items()
        }

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._models)

    def embed_documents(self, texts: list[str]) -> list[dict[str, SparseTerms]]:
        return [{name: _convert(m.embed_document(t)) for name, m in self._models.items()} for t in texts]

    def embed_query(self, text: str) -> dict[str, SparseTerms]:
        return {name: _convert(m.embed_query(text)) for name, m in self._models.items()}


def _convert(vec: E.SparseVector) -> SparseTerms:
    return list(vec.indices), list(vec.values)
