"""A question the graph takes as relational but the loaded data holds nothing for is
answered from the documents when they hold the answer; the data's answer stands otherwise."""

from __future__ import annotations

from collections.abc import Callable

from ingest.upload import IngestRequest
from service.carta import Carta
from service.query.types import SearchQuery
from tests.conftest import corpus_path
from tests.utils.documents import make_pdf

QUESTION = "Near which landmark is the Ondina sampling point SSA ON 200 in Salvador located?"


def test_a_relational_question_the_data_finds_nothing_for_is_answered_by_the_documents(
    make_carta: Callable[..., Carta],
) -> None:
    carta = make_carta()
    assert carta.graph is not None
    landmarks = corpus_path("poi", "r5r_poa_points_of_interest.csv").read_bytes()  # Porto Alegre only
    carta.graph.add_dataset(landmarks, "poa_landmarks.csv", "default", "landmark")
    lines = [
        "Salvador beach bulletin 26/2010: sampling points.",
        "The Ondina sampling point SSA ON 200 is located near the Morro da Sereia landmark.",
    ]
    carta.ingest(IngestRequest(make_pdf([lines]), "bulletin.pdf", "default"))
    tenant = carta.settings.default_tenant
    evidence = carta.graph_evidence.run(QUESTION, tenant, None, "en")
    assert evidence is not None and evidence.relational is not None  # the graph takes it...
    assert not evidence.relational.pairs and not evidence.relational.pois  # ...and finds nothing
    answer = carta.ask(SearchQuery(QUESTION, tenant))
    assert not answer.refused and "Morro da Sereia" in answer.answer, answer.answer
    assert answer.graph is None and answer.citations
    # the documents hold nothing: the data's answer, naming what it searched, stands
    other = carta.ask(SearchQuery("Which landmarks are within 500 m of each other in Salvador?", tenant))
    assert other.graph is not None and "Salvador" in other.answer


def test_a_question_about_what_the_data_lacks_per_polygon_is_the_documents(
    make_carta: Callable[..., Carta],
) -> None:
    """With only Recife's bairros loaded, "which bairro had the most flooding points" is no
    count of bairros per bairro (1 each) nor a bairro / flooding-point pair search: the
    report that counts the flooding points answers it."""
    carta = make_carta()
    assert carta.graph is not None
    bairros = corpus_path("poi", "recife_bairros.geojson").read_bytes()
    carta.graph.add_dataset(bairros, "recife_bairros.geojson", "default", "bairro")
    lines = [
        "Relatório de drenagem do Recife, 2024.",
        "O bairro de Afogados teve 45 pontos de alagamento em 2024, o maior número da cidade.",
    ]
    carta.ingest(IngestRequest(make_pdf([lines]), "drenagem.pdf", "default"))
    tenant = carta.settings.default_tenant
    answer = carta.ask(SearchQuery("Qual bairro do Recife teve mais pontos de alagamento em 2024?", tenant))
    assert not answer.refused and "Afogados" in answer.answer, answer.answer
    assert answer.graph is None and answer.citations


def test_a_list_the_data_finds_nothing_for_is_answered_by_the_documents(
    make_carta: Callable[..., Carta],
) -> None:
    """ "Quais são as coordenadas do Parque da Jaqueira?" with Recife's bairros loaded reads
    as the parks in the bairro Jaqueira, of which the data has none: the report that gives
    the park's coordinates answers it, not "no park in Jaqueira in the loaded data"."""
    carta = make_carta()
    assert carta.graph is not None
    bairros = corpus_path("poi", "recife_bairros.geojson").read_bytes()
    carta.graph.add_dataset(bairros, "recife_bairros.geojson", "default", "bairro")
    lines = [
        "Relatório ambiental do Recife, 2024: pontos de referência.",
        "Parque da Jaqueira (-8,0375; -34,9030), no bairro da Jaqueira.",
    ]
    carta.ingest(IngestRequest(make_pdf([lines]), "relatorio.pdf", "default"))
    tenant = carta.settings.default_tenant
    question = "Quais são as coordenadas do Parque da Jaqueira?"
    evidence = carta.graph_evidence.run(question, tenant, None, "pt")
    assert evidence is not None and evidence.analytic is not None and not evidence.analytic.rows
    answer = carta.ask(SearchQuery(question, tenant))
    assert not answer.refused and "-34,9030" in answer.answer, answer.answer
    assert answer.graph is None and answer.citations
