"""Entity resolution by name-embedding similarity (rule "embedding", the text encoder's
vectors, CARTA_DOCGRAPH_MERGE_SIMILARITY): a company's other spelling merges into it with the
similarity recorded; a different company with a shared word does not; codes and laws never
merge this way; deleting the document that taught the merge undoes it, and deleting the one
that named the entity first renames it after the spelling left (nothing of it stays); with
the LLM scripted as the extractor, a person's variant name merges across documents."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from docgraph.store import ChunkText, DocGraphStore
from ingest.upload import IngestRequest
from models.text_encoder import TextEncoder
from service.carta import Carta
from service.settings import Settings
from tests.openai_protocol import OpenAIProtocolServer, part_texts
from tests.utils.documents import make_pdf

TENANT = "acme"
THRESHOLD = Settings.model_fields["docgraph_merge_similarity"].default  # the measured one
FIRST = "Auto de infração lavrado contra JUMA PARTICIPAÇÕES S.A. pela Lei 9.605/1998."
SECOND = "A JUMA PARTICIPAÇÕES S/A recorreu; a JUMA MINERAÇÃO LTDA não, segundo a Lei 9.605/1999."


def _store(tmp_path: Path, text_encoder: TextEncoder, threshold: float = THRESHOLD) -> DocGraphStore:
    return DocGraphStore(tmp_path / "g.sqlite3", embed=text_encoder.embed, merge_similarity=threshold)


def _orgs(store: DocGraphStore) -> list[tuple[str, int]]:
    return sorted((e.name, e.documents) for e in store.search(TENANT) if e.kind == "org")


def test_a_variant_spelling_merges_with_its_similarity_and_leaves_with_its_document(
    tmp_path: Path, text_encoder: TextEncoder
) -> None:
    assert THRESHOLD > 0  # on by default
    store = _store(tmp_path, text_encoder)
    store.add_document(TENANT, [ChunkText("d1", 1, 0, FIRST)])
    alone = store.counts(TENANT)
    store.add_document(TENANT, [ChunkText("d2", 1, 0, SECOND)])
    assert _orgs(store) == [("JUMA MINERAÇÃO LTDA", 1), ("JUMA PARTICIPAÇÕES S.A.", 2)]
    juma = next(e for e in store.search(TENANT, "juma participacoes") if e.documents == 2)
    entity = store.entity(TENANT, juma.id)
    assert entity is not None
    merge = next(m for m in entity["merges"] if m["rule"] == "embedding")
    assert merge["alias"] == "juma participacoes s/a" and merge["doc_id"] == "d2"
    assert THRESHOLD <= merge["similarity"] < 1.0
    assert [m["rule"] for m in entity["mentions"]] == ["folded-name", "embedding"]
    laws = sorted(e.name for e in store.search(TENANT) if e.kind == "law")
    assert len(laws) == 2  # 1998 and 1999: exact keys, never merged by similarity

    store.delete_document(TENANT, "d2")  # the merge leaves with the document that taught it
    assert store.counts(TENANT) == alone
    store.add_document(TENANT, [ChunkText("d2", 1, 0, SECOND)])
    store.delete_document(TENANT, "d1")  # the first spelling's document gone: the entity is renamed
    assert _orgs(store) == [("JUMA MINERAÇÃO LTDA", 1), ("JUMA PARTICIPAÇÕES S/A", 1)]
    with store._lock:
        raw = store._conn.execute("SELECT name FROM entities").fetchall()
    assert all("S.A." not in name for (name,) in raw)
    store.delete_document(TENANT, "d2")
    assert set(store.counts(TENANT).values()) == {0}
    store.close()


def test_without_a_threshold_nothing_merges_by_similarity(tmp_path: Path, text_encoder: TextEncoder) -> None:
    store = _store(tmp_path, text_encoder, threshold=0.0)
    store.add_document(TENANT, [ChunkText("d1", 1, 0, FIRST)])
    store.add_document(TENANT, [ChunkText("d2", 1, 0, SECOND)])
    assert len(_orgs(store)) == 3 and store.counts(TENANT)["name_vectors"] == 0
    store.close()


KNOWN = ["Hernando Bedoya", "Hernando M. Bedoya", "Hernando Gomez"]


def naming_model(body: dict[str, Any]) -> str:
    """An extracting model that names the people of KNOWN its passage holds."""
    passage = part_texts(body)[-1]
    people = [
        {"name": n, "kind": "person", "acronym": None, "description": ""} for n in KNOWN if n in passage
    ]
    if (body.get("response_format") or {}).get("json_schema", {}).get("name") != "chunk_graph":
        return json.dumps({"title": "t", "summary": "s", "findings": []})
    return json.dumps({"entities": people, "relations": []})


def test_the_llms_variant_of_a_persons_name_merges_across_documents(
    make_carta: Callable[..., Carta], llm_server: OpenAIProtocolServer, tmp_path: Path
) -> None:
    llm_server.responder = naming_model
    carta = make_carta(tmp_path / "data", **llm_server.settings(), docgraph_llm_summaries=0)
    first = carta.ingest(
        IngestRequest(make_pdf(["The book was written by Hernando Bedoya."]), "a.pdf", TENANT)
    )
    second = "Hernando M. Bedoya and Hernando Gomez reviewed the chapter."
    carta.ingest(IngestRequest(make_pdf([second]), "b.pdf", TENANT))
    assert carta.docgraph is not None
    people = sorted((e.name, e.documents) for e in carta.docgraph.search(TENANT) if e.kind == "person")
    assert people == [("Hernando Bedoya", 2), ("Hernando Gomez", 1)]
    bedoya = carta.docgraph.search(TENANT, "hernando bedoya")[0]
    entity = carta.docgraph.entity(TENANT, bedoya.id)
    assert entity is not None
    assert [(m["alias"], m["rule"]) for m in entity["merges"]] == [("hernando m. bedoya", "embedding")]
    assert len({m["doc_id"] for m in entity["mentions"]}) == 2
    rules = {m["doc_id"]: m["rule"] for m in entity["mentions"]}
    assert rules.pop(first.document.id) == "folded-name" and list(rules.values()) == ["embedding"]
