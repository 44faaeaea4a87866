"""The document graph through Carta: extraction at ingestion, incremental add and delete,
communities refreshed, erasure that leaves no byte of the document in the docgraph file,
and the entities channel ranking the chunk that names IBAMA first."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ingest.upload import IngestRequest
from service.carta import Carta
from service.erasure import verify
from tests.conftest import corpus_path
from tests.utils.documents import make_pdf

TENANT = "acme"
MARK = "ZQXDOCGRAPHMARK7"


def _ingest(carta: Carta, data: bytes, name: str) -> str:
    return carta.ingest(IngestRequest(data, name, TENANT)).document.id


def _ibama(carta: Carta) -> str:
    path = corpus_path("pdf", "br_ibama_autuacoes_amazonas_2010_p2.pdf")
    return _ingest(carta, path.read_bytes(), path.name)


def test_add_then_delete_is_incremental(make_carta: Callable[..., Carta]) -> None:
    carta = make_carta()
    assert carta.docgraph is not None
    ibama_doc = _ibama(carta)
    alone = carta.docgraph.counts(TENANT)
    other = make_pdf(
        ["O Instituto Brasileiro do Meio Ambiente (IBAMA) e a Fundação Nacional do Índio (FUNAI)."]
    )
    other_doc = _ingest(carta, other, "funai.pdf")
    ibama = carta.docgraph.search(TENANT, "ibama")[0]
    assert ibama.name == "IBAMA" and ibama.documents == 2  # one entity across both documents
    assert [e.name for e in carta.docgraph.search(TENANT, "funai")] == ["FUNAI"]
    assert carta.docgraph.counts(TENANT)["mentions"] == alone["mentions"] + 2

    carta.delete(TENANT, other_doc)
    assert carta.docgraph.search(TENANT, "funai") == []  # only the deleted document supported it
    assert carta.docgraph.counts(TENANT) == alone  # every row it added is gone, nothing else
    ibama = carta.docgraph.search(TENANT, "ibama")[0]
    assert ibama.documents == 1 and ibama.mentions > 1
    entity = carta.docgraph.entity(TENANT, ibama.id)
    assert entity is not None and {m["doc_id"] for m in entity["mentions"]} == {ibama_doc}
    assert entity["community"] is not None and "IBAMA" in entity["community"]["entities"]


def test_erasure_leaves_nothing_of_the_document_in_the_docgraph_file(
    make_carta: Callable[..., Carta], tmp_path: Path
) -> None:
    data = tmp_path / "data"
    carta = make_carta(data, erasure="immediate")
    keep = _ingest(carta, make_pdf(["O Ministério do Meio Ambiente (MMA) publicou o relatório."]), "mma.pdf")
    text = f"A Agência Nacional de Águas (ANA) e a {MARK} Participações Ltda, CNPJ 12.345.678/0001-90."
    doc_id = _ingest(carta, make_pdf([text]), "ana.pdf")
    assert carta.docgraph is not None and carta.docgraph.search(TENANT, "ana")
    markers = [MARK, "12.345.678/0001-90", "Agência Nacional"]
    assert any(h.path.startswith("docgraph") for h in verify(data, doc_id, markers).hits)

    carta.delete(TENANT, doc_id)
    left = [h for h in verify(data, doc_id, markers).hits if h.path.startswith("docgraph")]
    assert left == []
    assert [e.name for e in carta.docgraph.search(TENANT, "")] == ["MMA"]  # the other document stays
    assert carta.docgraph.search(TENANT, "mma")[0].documents == 1 and keep


def test_entities_channel_puts_the_ibama_chunk_first(make_carta: Callable[..., Carta]) -> None:
    carta = make_carta()
    _ibama(carta)
    salvador = corpus_path("pdf", "br_balneabilidade_salvador_26-2010.pdf")
    _ingest(carta, salvador.read_bytes(), salvador.name)
    channel = carta.retriever.channel("entities")
    assert channel is not None
    for question in ("what do the documents say about IBAMA", "o que os documentos dizem sobre o Ibama?"):
        result = carta.search(carta.query(question, TENANT, channels=frozenset({"entities"})))
        assert result.pages, question
        top = result.pages[0]
        assert "IBAMA" in " ".join(c.text for c in top.chunks).upper()
        assert "entities" in top.channels
