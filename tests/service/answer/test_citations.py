"""Citation checking by code against the pages that were sent."""

from __future__ import annotations

from service.answer.citations import check, parse
from service.answer.prompting import SentPage
from service.query.types import ChunkEvidence

CHUNKS = [
    ChunkEvidence(
        "abc", 2, 0, "O custo médio foi de R$ 86,40 por m³. Outra frase.", [1, 2, 3, 4], [595, 842], 1, 1.0
    ),
    ChunkEvidence(
        "abc", 2, 1, "A operação mobilizou 126 trabalhadores e 14 caminhões.", [5, 6, 7, 8], [5, 8], 2, 0.5
    ),
]
SENT = [SentPage("abc", 2, "Nota técnica", 1, "texto", CHUNKS), SentPage("def", 1, "Relatório", 2, "texto")]


def test_parse_reads_the_usual_citation_spellings() -> None:
    text = "A [abc p.2]. B [abc p. 3; def p.1]. C [def, p.7] D [graph] E [abc page 4] F [nota 1]"
    assert [(d, p) for _, d, p in parse(text)] == [("abc", 2), ("abc", 3), ("def", 1), ("def", 7), ("abc", 4)]


def test_valid_citations_get_quote_and_bbox_from_the_closest_chunk() -> None:
    result = check("A operação mobilizou 126 trabalhadores [abc p.2]. O relatório confirma [def p.1].", SENT)
    assert result.grounded and not result.invalid
    first, second = result.citations
    assert (first.doc_id, first.page_no, first.title) == ("abc", 2, "Nota técnica")
    assert first.quote.startswith("A operação mobilizou 126") and first.bbox == [5, 6, 7, 8]
    assert (second.doc_id, second.page_no, second.quote, second.bbox) == ("def", 1, "", [])


def test_citations_outside_the_evidence_are_flagged_and_the_answer_is_not_grounded() -> None:
    result = check("Custo de R$ 86,40 [abc p.2], e 99 canais [abc p.9] segundo [zzz p.1].", SENT)
    assert [(c.doc_id, c.page_no) for c in result.citations] == [("abc", 2)]
    assert [(c.doc_id, c.page_no, c.reason) for c in result.invalid] == [
        ("abc", 9, "page not in the evidence sent"),
        ("zzz", 1, "document not in the evidence sent"),
    ]
    assert not result.grounded


def test_an_answer_without_citations_is_not_grounded_and_its_claims_are_counted() -> None:
    result = check("O custo foi de oitenta reais. Foram mobilizados muitos trabalhadores.", SENT)
    assert not result.grounded and result.uncited_sentences == 2 and not result.citations
    assert check("Custo de R$ 86,40 [abc p.2] [abc p.2].", SENT).citations.__len__() == 1  # deduplicated
