"""Sentence vectors stored at ingestion: the gate grades with them exactly as it grades
when it embeds each candidate itself, a data dir from before the store still answers (and
can be filled), and erasing a document erases its vectors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pymupdf
import pytest

from ingest.upload import IngestRequest
from models.text_encoder import TextEncoder
from service.answer.gate import EMBED_CHARS, Grade, RelevanceGate
from service.answer.sentence_vectors import SentenceVectors, embedded_texts
from service.carta import Carta
from service.query.types import ChunkEvidence, PageEvidence
from tests.conftest import corpus_path

SERANON_PDF = "fr_pv_seranon_etude_impact_2022_p1-10.pdf"  # 10 pages of prose, tables and maps
# its pages 5-10 (0-based indexes): the answers, tables and prose, without the two dense pages
# of prose (3-4) that hold half the file's sentences and so half its ingestion time
SERANON_PAGES = range(4, 10)
QUESTIONS = [
    "En 2016, combien de MW solaires étaient raccordés au réseau en région PACA ?",
    "Qual era a potência solar instalada na Nouvelle-Aquitaine em 31 de dezembro de 2020?",
    "How much solar capacity did the European Union connect in 2018?",
    "What is the capital of Mongolia?",
]


def _chunk(text: str, chunk_no: int) -> ChunkEvidence:
    return ChunkEvidence("d", 1, chunk_no, text, [0, 0, 1, 1], [10, 10], chunk_no + 1, 1.0)


def test_embedded_texts_are_the_gates_candidates() -> None:
    texts = [
        "Short.\nIn 2019, WHO estimated that 58 million persons were chronically infected. Yes!  Another "
        "sentence follows here?\n\n" + "A very long table row · 12.5 · 13.7 " * 30,
        "Nagaland · 14.07 · 39.88 · -0.47\nMILHO SAFRA 16/17 Mato Grosso",
    ]
    page = PageEvidence("d", 1, "t", "f.pdf", "pdf", 1.0, chunks=[_chunk(t, i) for i, t in enumerate(texts)])
    gate_texts = [c.sentence[:EMBED_CHARS] for c in RelevanceGate._candidates([page])]
    assert gate_texts == [t for chunk in texts for t in embedded_texts(chunk)]
    assert all(len(t) <= EMBED_CHARS for t in gate_texts)


def test_a_passage_in_another_language_than_the_encoders_is_also_embedded_translated() -> None:
    french = (
        "Le parc métropolitain progresse de 8,6 % avec 820 MW raccordés en 2020 dans la région, "
        "selon les données du réseau qui sont publiées par le gestionnaire."
    )
    english = "The mainland fleet grew by 8.6% with 820 MW connected in 2020 in the region."
    texts = embedded_texts(french, encoder_language="en")
    assert texts[0] == french and len(texts) == 2
    assert "connected" in texts[1].split() or "region" in texts[1].split()  # read into English
    assert embedded_texts(english, encoder_language="en") == [english]
    assert embedded_texts(french) == [french]  # a multilingual encoder: no translation


def test_stored_vectors_are_the_computed_ones(tmp_path: Path, text_encoder: TextEncoder) -> None:
    store = SentenceVectors(tmp_path / "sv.sqlite3", text_encoder)
    chunks = ["The river rose two metres in Recife. Schools closed for a week.", "Choveu 300 mm em abril."]
    pairs = [(c, False) for c in chunks]  # (text, is a table)
    assert store.add_document("t1", "doc", pairs) == 3
    assert store.add_document("t2", "doc", pairs) == 0  # the same texts: copied, not embedded again
    texts = [t for c in chunks for t in embedded_texts(c)] + ["a sentence no document holds"]
    got = store.embed(texts)
    assert (store.hits, store.misses) == (3, 1)
    np.testing.assert_allclose(got, text_encoder.embed(texts), atol=1e-5)
    store.delete_document("t1", "doc")
    assert store.has_document("t2", "doc") and not store.has_document("t1", "doc")
    store.delete_document("t2", "doc")
    assert store.count() == 0
    store.close()


def _same_grades(stored: Grade, computed: Grade) -> None:
    assert [(c.sentence, c.chunk.chunk_no, c.page.page_no) for c in stored.candidates] == [
        (c.sentence, c.chunk.chunk_no, c.page.page_no) for c in computed.candidates
    ]
    assert [c.cosine for c in stored.candidates] == pytest.approx(
        [c.cosine for c in computed.candidates], abs=1e-5
    )
    assert (stored.passed, stored.related, stored.missing) == (
        computed.passed,
        computed.related,
        computed.missing,
    )
    assert stored.relevance == pytest.approx(computed.relevance, abs=1e-4)


def test_stored_and_computed_vectors_grade_the_same(make_carta: Callable[..., Carta]) -> None:
    pdf = corpus_path("pdf", SERANON_PDF)
    # pictures neither read as charts nor OCRed: the sentences under test are the text
    # layer's (and it saves half the test's time)
    carta = make_carta(geotag=False, graph_enabled=False, figure_text=False, chart_tables=False)
    with pymupdf.open(pdf) as doc:
        doc.select(SERANON_PAGES)
        carta.ingest(IngestRequest(doc.tobytes(), pdf.name, "default"))
    carta.settle()  # the background pass, when CARTA_SENTENCE_VECTORS_BACKGROUND is on
    store = carta.sentence_vectors
    assert store is not None and store.count() > 0
    # the same gate but for the stored vectors (a question in French is compared in translation too)
    computing = RelevanceGate(
        carta.text, carta.sparse, carta.gate.min_relevance, text_language=carta.gate.text_language
    )
    for question in QUESTIONS:
        result = carta.search(carta.query(question, "default"))
        misses = store.misses
        stored = carta.gate.grade(question, result)
        assert store.misses == misses, "a candidate sentence of an indexed chunk was not stored"
        _same_grades(stored, computing.grade(question, result))
        answer = carta.answerer.answer(question, result)
        carta.gate.sentence_vectors = None
        assert carta.answerer.answer(question, result).answer == answer.answer
        carta.gate.sentence_vectors = store
    assert store.hits > 0


def test_data_dir_without_vectors_answers_then_fills(
    tmp_path: Path, make_carta: Callable[..., Carta]
) -> None:
    pdf = corpus_path("pdf", "dib_2019_corrosion_inhibitor_p454.pdf")
    data = tmp_path / "data"
    old = make_carta(data, geotag=False, graph_enabled=False, sentence_vectors=False)
    doc = old.ingest(IngestRequest(pdf.read_bytes(), pdf.name, "default")).document
    question = "What is the corrosion rate with the egg shell inhibitor?"
    before = old.ask(old.query(question, "default")).answer
    old.close()
    carta = make_carta(data, geotag=False, graph_enabled=False)
    store = carta.sentence_vectors
    assert store is not None and store.count() == 0
    assert carta.ask(carta.query(question, "default")).answer == before  # embedded on the fly
    assert store.misses > 0 and store.hits == 0
    assert carta.fill_sentence_vectors() == 1 and carta.fill_sentence_vectors() == 0
    misses = store.misses
    assert carta.ask(carta.query(question, "default")).answer == before
    assert store.misses == misses and store.hits > 0
    carta.delete("default", doc.id)
    assert store.count() == 0
