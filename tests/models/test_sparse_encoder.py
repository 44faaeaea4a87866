"""BM25 sparse vectors, Portuguese and English, from the engine's own BM25."""

from __future__ import annotations

import pytest

from models.sparse_encoder import LANGUAGES, SparseEncoder


@pytest.fixture(scope="module")
def encoder() -> SparseEncoder:
    return SparseEncoder()


def _terms(vec: tuple[list[int], list[float]]) -> set[int]:
    return set(vec[0])


def test_both_languages_are_present(encoder: SparseEncoder) -> None:
    assert encoder.names == ("bm25_pt", "bm25_en")
    assert set(LANGUAGES.values()) == set(encoder.names)
    query = encoder.embed_query("enchentes no Recife")
    (doc,) = encoder.embed_documents(["enchentes no Recife"])
    assert set(query) == set(doc) == {"bm25_pt", "bm25_en"}


def test_a_single_language_can_be_chosen() -> None:
    only_pt = SparseEncoder({"portuguese": "bm25_pt"})
    assert only_pt.names == ("bm25_pt",)
    assert set(only_pt.embed_query("chuva")) == {"bm25_pt"}


def test_portuguese_stemming_matches_plural_and_singular(encoder: SparseEncoder) -> None:
    query = encoder.embed_query("enchentes nos bairros")["bm25_pt"]
    (doc,) = encoder.embed_documents(["a enchente no bairro"])
    shared = _terms(query) & _terms(doc["bm25_pt"])
    assert len(shared) == 2  # "enchent" and "bairr"
    assert _terms(query) == _terms(doc["bm25_pt"])  # "nos", "a", "no" are stopwords
    (unrelated,) = encoder.embed_documents(["receita trimestral de software"])
    assert not _terms(query) & _terms(unrelated["bm25_pt"])


def test_english_stemming(encoder: SparseEncoder) -> None:
    query = encoder.embed_query("flooded neighbourhoods")["bm25_en"]
    (doc,) = encoder.embed_documents(["the flooding of a neighbourhood"])
    assert _terms(query) == _terms(doc["bm25_en"])
    assert len(_terms(query)) == 2


def test_accents_and_case_are_folded(encoder: SparseEncoder) -> None:
    for name in encoder.names:
        assert encoder.embed_query("água")[name][0] == encoder.embed_query("agua")[name][0]
        assert encoder.embed_query("Poluição")[name][0] == encoder.embed_query("POLUICAO")[name][0]
    assert encoder.embed_query("água")["bm25_pt"][0] != encoder.embed_query("chuva")["bm25_pt"][0]


def test_stopwords_are_dropped(encoder: SparseEncoder) -> None:
    assert encoder.embed_query("de que para com os as no")["bm25_pt"] == ([], [])
    assert encoder.embed_query("the and of a to")["bm25_en"] == ([], [])
    only_content = encoder.embed_query("chuva")["bm25_pt"]
    assert encoder.embed_query("a chuva de que para")["bm25_pt"] == only_content


def test_empty_text_gives_empty_vectors(encoder: SparseEncoder) -> None:
    assert encoder.embed_query("") == {"bm25_pt": ([], []), "bm25_en": ([], [])}
    assert encoder.embed_documents([]) == []


def test_vectors_are_valid_sparse_vectors(encoder: SparseEncoder) -> None:
    texts = ["Relatório de enchentes 2024: 214 pontos de alagamento em Afogados e Boa Viagem.", "x y z"]
    for vectors in encoder.embed_documents(texts) + [encoder.embed_query(texts[0])]:
        for indices, values in vectors.values():
            assert len(indices) == len(values)
            assert len(set(indices)) == len(indices)  # unique, as the store requires
            assert all(isinstance(i, int) and i >= 0 for i in indices)
            assert all(v > 0 for v in values)


def test_query_terms_are_unweighted_and_documents_weigh_repeats(encoder: SparseEncoder) -> None:
    # The store applies IDF; the query side just lists terms.
    _, query_values = encoder.embed_query("água água chuva")["bm25_pt"]
    assert query_values == [1.0, 1.0]
    (doc,) = encoder.embed_documents(["água água água chuva"])
    indices, values = doc["bm25_pt"]
    weights = dict(zip(indices, values, strict=True))
    (agua,) = encoder.embed_query("água")["bm25_pt"][0]
    (chuva,) = encoder.embed_query("chuva")["bm25_pt"][0]
    assert weights[agua] > weights[chuva] > 0


def test_embed_documents_keeps_order(encoder: SparseEncoder) -> None:
    texts = ["chuva", "enchente", "seca"]
    batch = encoder.embed_documents(texts)
    assert batch == [encoder.embed_documents([t])[0] for t in texts]
    assert len({tuple(v["bm25_pt"][0]) for v in batch}) == 3
