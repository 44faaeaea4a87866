"""Offline extraction over a real corpus page (the IBAMA enforcement table) and over
sentences in Portuguese and English; resolution of an acronym and its expansion."""

from __future__ import annotations

import pymupdf

from docgraph.extract import extract
from docgraph.resolve import resolve
from tests.conftest import corpus_path


def _page_text(name: str, page: int = 0) -> str:
    with pymupdf.open(corpus_path("pdf", name)) as doc:
        return doc[page].get_text()


def test_ibama_page_yields_its_organisations_laws_and_codes() -> None:
    mentions = extract(_page_text("br_ibama_autuacoes_amazonas_2010_p2.pdf"))
    by_kind: dict[str, set[str]] = {}
    for m in mentions:
        by_kind.setdefault(m.kind, set()).add(m.key)
    assert {"ibama", "mma"} <= by_kind["org"]
    assert "juma participacoes s a" in by_kind["org"]
    assert {"lei 9605/1998", "decreto 6514/2008", "resolucao conama 237/1997"} <= by_kind["law"]
    assert "cnpj:63637540000109" in by_kind["code"]  # JOAO BARRETO FEITOSA's row
    assert "processo:02005000290201057" in by_kind["code"]
    assert "2010-03-18" in by_kind["date"]
    ibama = next(m for m in mentions if m.acronym == "IBAMA" and m.expansion)
    assert ibama.expansion == "instituto brasileiro do meio ambiente e dos recursos naturais renovaveis"


def test_conama_resolution_with_a_written_date() -> None:
    laws = [m for m in extract(_page_text("br_balneabilidade_salvador_26-2010.pdf", 2)) if m.kind == "law"]
    assert [m.key for m in laws] == ["resolucao conama 274/2000"]


def test_portuguese_and_english_definitions_and_amounts() -> None:
    pt = extract(
        "O Instituto Brasileiro do Meio Ambiente (IBAMA) aplicou multa de R$ 39.000,00 em 18/03/2010."
    )
    en = extract("The Expanded Programme on Immunization (EPI) received US$ 1.2 million.")
    assert [(m.kind, m.key) for m in pt] == [
        ("org", "ibama"),
        ("amount", "R$ 39000.00"),
        ("date", "2010-03-18"),
    ]
    assert [(m.kind, m.key) for m in en] == [("programme", "epi"), ("amount", "US$ 1200000.00")]
    # a parenthesised word that is not an acronym of the words before it is no entity
    assert extract("Moro em Recife (Brasil) desde 2001.") == []


def test_acronym_and_expansion_resolve_to_one_entity() -> None:
    text = "Instituto Brasileiro do Meio Ambiente e dos Recursos Naturais Renováveis (Ibama). O IBAMA autuou."
    mentions = [m for m in extract(text) if m.kind == "org"]
    assert len(mentions) == 2
    resolved = [resolve(m, {}) for m in mentions]
    assert {r.entity_key for r in resolved} == {"org:ibama"}
    assert [r.rule for r in resolved] == ["acronym", "acronym"]
    assert resolved[0].alias == "instituto brasileiro do meio ambiente e dos recursos naturais renovaveis"


def test_an_expansion_written_out_alone_is_its_acronym_entity() -> None:
    text = "Not created by the World Health Organization (WHO).\nGeneva: World Health Organization; 2022."
    orgs = [m for m in extract(text) if m.kind == "org"]
    assert [(m.text, m.rule) for m in orgs] == [
        ("World Health Organization (WHO)", "acronym(long)"),
        ("World Health Organization", "expansion(known)"),
    ]
    assert {resolve(m, {}).entity_key for m in orgs} == {"org:who"}


def test_a_name_equal_to_a_known_alias_joins_that_entity_and_says_why() -> None:
    [company] = extract("Multa aplicada a ACME PARTICIPAÇÕES LTDA em Manaus.")
    joined = resolve(company, {"acme participacoes ltda": "org:acme"})
    assert (joined.entity_key, joined.rule) == ("org:acme", "alias")
    alone = resolve(company, {})
    assert (alone.entity_key, alone.rule) == ("org:acme participacoes ltda", "folded-name")
